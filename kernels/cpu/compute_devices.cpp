#include "kernels/compute_devices.h"

#include "kernels/cpu/cpu_features.h"

#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>

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
    const CpuFeatures& cpu = cpuFeatures();
    for (const auto& [present, name] :
        { std::pair { cpu.avx2, "avx2 " }, std::pair { cpu.fma, "fma " },
            std::pair { cpu.f16c, "f16c " }, std::pair { cpu.avx512f, "avx512f " } }) {
        if (present)
            extensions += name;
    }
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
    cpu.memoryBytes
        = pages > 0 && pageSize > 0 ? std::uint64_t(pages) * std::uint64_t(pageSize) : 0;
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

double cudaCopyBandwidth(int)
{
    return 0.0;
}
#endif

} // namespace cw::kernels
