#include "kernels/cuda/chained_launch.cuh"

#include <atomic>

namespace cw::kernels::cuda::chained_detail {

bool chainingAvailable()
{
    static const bool wanted = [] {
        const char* v = std::getenv("CW_CUDA_CHAINED");
        return !(v && std::strcmp(v, "0") == 0);
    }();
    if (!wanted)
        return false;
    // Per device, since a process may drive GPUs of different generations: 0 unknown, 1 no, 2 yes.
    constexpr int kDevices = 64;
    static std::atomic<int> known[kDevices];
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kDevices)
        return false;
    int state = known[device].load(std::memory_order_relaxed);
    if (state == 0) {
        int major = 0;
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
        state = major >= 9 ? 2 : 1;
        known[device].store(state, std::memory_order_relaxed);
    }
    return state == 2;
}

} // namespace cw::kernels::cuda::chained_detail
