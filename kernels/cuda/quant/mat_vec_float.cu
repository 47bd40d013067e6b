// Matrix-vector kernels of F32, F16, BF16 (see mat_vec_kernels.cuh).
#include "kernels/cuda/quant/mat_vec_kernels.cuh"

namespace cw::kernels::cuda::quant_detail {

template cudaError_t launchMatVec<TensorType::F32>(const MatVecArgs&);
template cudaError_t launchMatVec<TensorType::F16>(const MatVecArgs&);
template cudaError_t launchMatVec<TensorType::BF16>(const MatVecArgs&);

} // namespace cw::kernels::cuda::quant_detail
