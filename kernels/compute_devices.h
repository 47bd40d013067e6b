#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cw::kernels {

enum class DeviceKind { Cpu, Cuda };

// A processor the engine can run on, as the user picks it in settings or with --device.
struct ComputeDevice {
    DeviceKind kind = DeviceKind::Cpu;
    int index = 0;               // CUDA ordinal; 0 for the CPU
    std::string name;            // "NVIDIA H200", "AMD Ryzen 9 7950X"
    std::uint64_t memoryBytes = 0; // device memory (GPU) or physical memory (CPU)
    int computeUnits = 0;        // SMs or hardware threads
    std::string capability;      // "9.0" for CUDA; ISA extensions for the CPU ("avx2 fma")
};

// The CPU first, then every CUDA device the runtime reports. A missing driver or
// a build without CUDA simply yields no CUDA entries.
std::vector<ComputeDevice> listComputeDevices();

// Number of usable CUDA devices; 0 without a driver, a GPU or CUDA support.
int cudaDeviceCount();

// Memory bandwidth of CUDA device `index` in bytes per second, measured with device-to-device
// copies of a 1 GiB buffer (bytes read plus bytes written, median of 10); 0 when it cannot be
// measured (no device, no room).
double cudaCopyBandwidth(int index);

} // namespace cw::kernels
