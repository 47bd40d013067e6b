#include "kernels/compute_devices.h"

#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace cw::kernels {

#ifdef CW_HAVE_CUDA
std::vector<ComputeDevice> listCudaDevices(); // kernels/cuda/cuda_devices.cu
#endif

namespace {

std::string cpuModelName()
{
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos && colon + 2 <= line.size())
                return line.substr(colon + 2);
        }
    }
    return "CPU";
}

std::string cpuExtensions()
{
    std::string extensions;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        extensions += "avx2 ";
    if (__builtin_cpu_supports("fma"))
        extensions += "fma ";
    if (__builtin_cpu_supports("f16c"))
        extensions += "f16c ";
    if (__builtin_cpu_supports("avx512f"))
        extensions += "avx512f ";
#endif
    if (!extensions.empty())
        extensions.pop_back();
    return extensions;
}

} // namespace

std::vector<ComputeDevice> listComputeDevices()
{
    std::vector<ComputeDevice> devices;
    ComputeDevice cpu;
    cpu.kind = DeviceKind::Cpu;
    cpu.name = cpuModelName();
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGESIZE);
    cpu.memoryBytes = pages > 0 && pageSize > 0 ? std::uint64_t(pages) * std::uint64_t(pageSize) : 0;
    cpu.computeUnits = int(std::thread::hardware_concurrency());
    cpu.capability = cpuExtensions();
    devices.push_back(cpu);
#ifdef CW_HAVE_CUDA
    for (auto& gpu : listCudaDevices())
        devices.push_back(std::move(gpu));
#endif
    return devices;
}

#ifndef CW_HAVE_CUDA
int cudaDeviceCount()
{
    return 0;
}
#endif

} // namespace cw::kernels
