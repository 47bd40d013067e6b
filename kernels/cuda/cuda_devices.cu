#include "kernels/compute_devices.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

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

double cudaCopyBandwidth(int index)
{
    if (index < 0 || index >= cudaDeviceCount() || cudaSetDevice(index) != cudaSuccess)
        return 0.0;
    const std::size_t bytes = std::size_t(1) << 30;
    void* a = nullptr;
    void* b = nullptr;
    if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
        cudaFree(a);
        cudaGetLastError();
        return 0.0;
    }
    cudaMemset(a, 1, bytes); // never time copies of untouched memory
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    std::vector<float> ms;
    for (int i = 0; i < 12; ++i) {
        cudaEventRecord(start);
        cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float t = 0.0f;
        cudaEventElapsedTime(&t, start, stop);
        if (i >= 2) // the first copies warm the clocks up
            ms.push_back(t);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaFree(a);
    cudaFree(b);
    std::sort(ms.begin(), ms.end());
    const float median = ms[ms.size() / 2];
    return median > 0 ? 2.0 * double(bytes) / (double(median) * 1e-3) : 0.0;
}

} // namespace cw::kernels
