#include "engine/backend/cuda_start_error.h"

#include <filesystem>

namespace cw::engine {
namespace {

std::string versionText(int version)
{
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

} // namespace

CudaStartFailure classifyCudaStartFailure(bool insufficientDriver, bool noDevice, bool driverLoaded)
{
    // Only the "insufficient driver" answer is ambiguous; a container may hide /proc/driver
    // while the GPU works, so the file decides nothing else.
    if (insufficientDriver)
        return driverLoaded ? CudaStartFailure::OldDriver : CudaStartFailure::NoDriver;
    if (noDevice)
        return CudaStartFailure::NoDevice;
    return CudaStartFailure::Other;
}

std::string cudaStartErrorMessage(
    CudaStartFailure failure, int runtimeVersion, const std::string& runtimeMessage)
{
    const std::string needed = "CUDA " + versionText(runtimeVersion);
    switch (failure) {
    case CudaStartFailure::NoDriver:
        return "no NVIDIA driver is loaded on this machine, so the GPU cannot be used: install "
               "the NVIDIA driver (for "
            + needed + " or newer) if it has an NVIDIA GPU, or use --device cpu";
    case CudaStartFailure::OldDriver:
        return "the NVIDIA driver is older than this build needs (" + needed
            + "): update the driver, or use --device cpu";
    case CudaStartFailure::NoDevice:
        return "the NVIDIA driver is loaded but sees no GPU (check nvidia-smi), or use --device "
               "cpu";
    case CudaStartFailure::Other:
        break;
    }
    return "the GPU cannot be used (" + runtimeMessage + "): check the NVIDIA driver (for " + needed
        + " or newer) with nvidia-smi, or use --device cpu";
}

bool nvidiaDriverLoaded()
{
    std::error_code error;
    return std::filesystem::exists("/proc/driver/nvidia/version", error);
}

} // namespace cw::engine
