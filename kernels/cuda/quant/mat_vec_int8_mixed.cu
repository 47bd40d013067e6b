// One launch of the one-token integer products over matrices of two types (see
// mat_vec_int8.cuh): the pairs the K-quant mixes put side by side.
#include "kernels/cuda/quant/mat_vec_int8.cuh"

#include <utility>

namespace cw::kernels::cuda::quant_detail {

bool launchIntMatVecTwoTypes(TensorType first, TensorType second, int countFirst,
    const IntMatVecArgs& a, cudaError_t& result)
{
    if (a.tokens != 1 || a.x.planes != 1 || countFirst < 1 || countFirst >= a.targetCount
        || a.targetCount > kMaxIntMatVecTargets)
        return false;
    // The kernels exist for (lower, higher) of each pair; the other order has its targets
    // swapped round.
    IntMatVecArgs swapped = a;
    if (first > second) {
        const int countSecond = a.targetCount - countFirst;
        for (int j = 0; j < countSecond; ++j)
            swapped.targets[j] = a.targets[countFirst + j];
        for (int j = 0; j < countFirst; ++j)
            swapped.targets[countSecond + j] = a.targets[j];
        std::swap(first, second);
        countFirst = countSecond;
    }
    using int_dot::launchIntMatVecStagedMixed;
    if (first == TensorType::Q4_K && second == TensorType::Q5_K)
        return launchIntMatVecStagedMixed<TensorType::Q4_K, TensorType::Q5_K>(
            swapped, countFirst, result);
    if (first == TensorType::Q4_K && second == TensorType::Q6_K)
        return launchIntMatVecStagedMixed<TensorType::Q4_K, TensorType::Q6_K>(
            swapped, countFirst, result);
    if (first == TensorType::Q5_K && second == TensorType::Q6_K)
        return launchIntMatVecStagedMixed<TensorType::Q5_K, TensorType::Q6_K>(
            swapped, countFirst, result);
    return false;
}

} // namespace cw::kernels::cuda::quant_detail
