// Integer matrix-vector products of Q2_K, Q3_K, Q4_K (see mat_vec_int8.cuh).
#include "kernels/cuda/quant/mat_vec_int8.cuh"

namespace cw::kernels::cuda::quant_detail {

template cudaError_t launchIntMatVec<TensorType::Q2_K>(const IntMatVecArgs&);
template cudaError_t launchIntMatVec<TensorType::Q3_K>(const IntMatVecArgs&);
template cudaError_t launchIntMatVec<TensorType::Q4_K>(const IntMatVecArgs&);

} // namespace cw::kernels::cuda::quant_detail
