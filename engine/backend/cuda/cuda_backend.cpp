#include "engine/backend/cuda/cuda_backend.h"

namespace cw::engine {

Result<std::unique_ptr<Backend>> createCudaBackend(
    const ModelDescription&, const ModelWeights&, const CudaBackendOptions&)
{
    return makeError("the CUDA backend does not run models yet; use --device cpu");
}

} // namespace cw::engine
