#pragma once

// What went wrong when the CUDA runtime would not start, in words a user can act on. Kept free
// of CUDA headers so that it is tested in every build, with or without a GPU.
#include <string>

namespace cw::engine {

enum class CudaStartFailure {
    NoDriver, // no NVIDIA kernel driver is loaded (no /proc/driver/nvidia/version)
    OldDriver, // a driver is loaded but supports an older CUDA than this build
    NoDevice, // the driver runs but sees no GPU
    Other, // anything else: the runtime's own words are given
};

// Classifies cudaGetDeviceCount's error: `insufficientDriver` for cudaErrorInsufficientDriver
// (which the runtime returns both for an old driver and for none at all: `driverLoaded`, whether
// the kernel driver is there, tells them apart), `noDevice` for cudaErrorNoDevice.
CudaStartFailure classifyCudaStartFailure(
    bool insufficientDriver, bool noDevice, bool driverLoaded);

// The message: what is wrong and what to do ("... or use --device cpu"). `runtimeVersion` is
// CUDART_VERSION (13000 for 13.0); `runtimeMessage` the runtime's error string.
std::string cudaStartErrorMessage(
    CudaStartFailure failure, int runtimeVersion, const std::string& runtimeMessage);

// Whether the NVIDIA kernel driver is loaded on this machine.
bool nvidiaDriverLoaded();

} // namespace cw::engine
