// Tensor-core integer products of Q3_K, Q4_K, Q5_K, Q6_K (see mat_mul_int8.cuh).
#include "kernels/cuda/quant/mat_mul_int8.cuh"

namespace cw::kernels::cuda::quant_detail {

template cudaError_t launchIntMatMul<TensorType::Q3_K>(const IntMatVecArgs&);
template cudaError_t launchIntMatMul<TensorType::Q4_K>(const IntMatVecArgs&);
template cudaError_t launchIntMatMul<TensorType::Q5_K>(const IntMatVecArgs&);
template cudaError_t launchIntMatMul<TensorType::Q6_K>(const IntMatVecArgs&);

} // namespace cw::kernels::cuda::quant_detail
