// Matrix-vector kernels of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 (see mat_vec_kernels.cuh).
#include "kernels/cuda/quant/mat_vec_kernels.cuh"

namespace cw::kernels::cuda::quant_detail {

template cudaError_t launchMatVec<TensorType::Q4_0>(const MatVecArgs&);
template cudaError_t launchMatVec<TensorType::Q4_1>(const MatVecArgs&);
template cudaError_t launchMatVec<TensorType::Q5_0>(const MatVecArgs&);
template cudaError_t launchMatVec<TensorType::Q5_1>(const MatVecArgs&);
template cudaError_t launchMatVec<TensorType::Q8_0>(const MatVecArgs&);

} // namespace cw::kernels::cuda::quant_detail
