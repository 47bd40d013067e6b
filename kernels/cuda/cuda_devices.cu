#include "kernels/compute_devices.h"

#include <cuda_runtime.h>

namespace cw::kernels {

int cudaDeviceCount()
{
    int count = 0;
    // Without a driver the runtime returns an error rather than crashing.
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
}

std::vector<ComputeDevice> listCudaDevices()
{
    std::vector<ComputeDevice> devices;
    const int count = cudaDeviceCount();
    for (int i = 0; i < count; ++i) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
            continue;
        ComputeDevice device;
        device.kind = DeviceKind::Cuda;
        device.index = i;
        device.name = prop.name;
        device.memoryBytes = prop.totalGlobalMem;
        device.computeUnits = prop.multiProcessorCount;
        device.capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
        devices.push_back(std::move(device));
    }
    return devices;
}

} // namespace cw::kernels
