// Tensor-core integer products of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_XS (see mat_mul_int8.cuh).
#include "kernels/cuda/quant/mat_mul_int8.cuh"

namespace cw::kernels::cuda::quant_detail {

template cudaError_t launchIntMatMul<TensorType::Q4_0>(const IntMatVecArgs&);
template cudaError_t launchIntMatMul<TensorType::Q4_1>(const IntMatVecArgs&);
template cudaError_t launchIntMatMul<TensorType::Q5_0>(const IntMatVecArgs&);
template cudaError_t launchIntMatMul<TensorType::Q5_1>(const IntMatVecArgs&);
template cudaError_t launchIntMatMul<TensorType::Q8_0>(const IntMatVecArgs&);
template cudaError_t launchIntMatMul<TensorType::IQ4_XS>(const IntMatVecArgs&);

} // namespace cw::kernels::cuda::quant_detail
