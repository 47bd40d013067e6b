// Integer matrix-vector products of Q5_K, Q6_K, IQ4_XS (see mat_vec_int8.cuh).
#include "kernels/cuda/quant/mat_vec_int8.cuh"

namespace cw::kernels::cuda::quant_detail {

template cudaError_t launchIntMatVec<TensorType::Q5_K>(const IntMatVecArgs&);
template cudaError_t launchIntMatVec<TensorType::Q6_K>(const IntMatVecArgs&);
template cudaError_t launchIntMatVec<TensorType::IQ4_XS>(const IntMatVecArgs&);

} // namespace cw::kernels::cuda::quant_detail
