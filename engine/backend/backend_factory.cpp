#include "engine/backend/backend_factory.h"

#include "engine/backend/cpu/cpu_backend.h"
#include "kernels/compute_devices.h"
#include "kernels/switches/cuda_switches.h"

#if defined(CW_HAVE_CUDA)
#include "engine/backend/cuda/cuda_backend.h"
#endif

#include <charconv>

namespace cw::engine {

Result<DeviceSpec> parseDevice(std::string_view text)
{
    DeviceSpec spec;
    if (text == "cpu")
        return spec;
    if (text == "auto") {
        spec.kind = DeviceSpec::Kind::Auto;
        return spec;
    }
    spec.kind = DeviceSpec::Kind::Cuda;
    if (text == "cuda")
        return spec;
    if (text.starts_with("cuda:")) {
        const auto digits = text.substr(5);
        const auto* end = digits.data() + digits.size();
        const auto parsed = std::from_chars(digits.data(), end, spec.index);
        if (!digits.empty() && parsed.ec == std::errc {} && parsed.ptr == end && spec.index >= 0)
            return spec;
    }
    return makeError("unknown device \"" + std::string(text)
        + "\": use cpu, cuda, cuda:N (N: the GPU's number in `clausewright-cli devices`) or auto");
}

namespace {

std::unique_ptr<Backend> cpuBackend(
    const ModelDescription& description, const ModelWeights& weights, const BackendRequest& request)
{
    CpuBackendOptions options;
    options.threads = request.threads;
    options.kvBlockTokens = request.capacity.kvBlockTokens;
    options.integerProducts = request.integerProducts;
    return std::make_unique<CpuBackend>(description, weights, options);
}

} // namespace

Result<std::unique_ptr<Backend>> createBackend(
    const ModelDescription& description, const ModelWeights& weights, const BackendRequest& request)
{
    if (request.device.kind == DeviceSpec::Kind::Cpu)
        return cpuBackend(description, weights, request);
#if defined(CW_HAVE_CUDA)
    // A CW_CUDA_ switch with a typo must not silently measure (or run) the default.
    if (auto bad = kernels::cudaSwitchErrorInThisProcess())
        return makeError(*bad);
    const bool automatic = request.device.kind == DeviceSpec::Kind::Auto;
    if (automatic && kernels::cudaDeviceCount() == 0)
        return cpuBackend(description, weights, request);
    CudaBackendOptions options;
    options.device = request.device.index;
    options.capacity = request.capacity;
    options.precision = request.gpuPrecision;
    options.memoryBudgetBytes = request.gpuMemoryBytes;
    options.expertCountsPath = request.expertCountsPath;
    options.hostThreads = request.threads;
    auto cuda = createCudaBackend(description, weights, options);
    if (!cuda && automatic)
        return cpuBackend(description, weights, request);
    return cuda;
#else
    if (request.device.kind == DeviceSpec::Kind::Auto)
        return cpuBackend(description, weights, request);
    return makeError(
        "this build of Clausewright has no CUDA backend (it was built without the CUDA "
        "toolkit); use --device cpu");
#endif
}

} // namespace cw::engine
