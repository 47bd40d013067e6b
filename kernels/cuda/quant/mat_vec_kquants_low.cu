// Matrix-vector kernels of Q2_K, Q3_K, Q4_K (see mat_vec_kernels.cuh).
#include "kernels/cuda/quant/mat_vec_kernels.cuh"

namespace cw::kernels::cuda::quant_detail {

template cudaError_t launchMatVec<TensorType::Q2_K>(const MatVecArgs&);
template cudaError_t launchMatVec<TensorType::Q3_K>(const MatVecArgs&);
template cudaError_t launchMatVec<TensorType::Q4_K>(const MatVecArgs&);

} // namespace cw::kernels::cuda::quant_detail
