// Matrix-vector kernels of Q5_K, Q6_K, IQ4_XS (see mat_vec_kernels.cuh).
#include "kernels/cuda/quant/mat_vec_kernels.cuh"

namespace cw::kernels::cuda::quant_detail {

template cudaError_t launchMatVec<TensorType::Q5_K>(const MatVecArgs&);
template cudaError_t launchMatVec<TensorType::Q6_K>(const MatVecArgs&);
template cudaError_t launchMatVec<TensorType::IQ4_XS>(const MatVecArgs&);

} // namespace cw::kernels::cuda::quant_detail
