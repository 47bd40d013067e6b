#include "kernels/compute_devices.h"

#include <gtest/gtest.h>

TEST(CudaRuntime, reportsEveryDeviceWithMemoryAndCapability)
{
    const auto devices = cw::kernels::listComputeDevices();
    int gpus = 0;
    for (const auto& device : devices) {
        if (device.kind != cw::kernels::DeviceKind::Cuda)
            continue;
        ++gpus;
        EXPECT_GT(device.memoryBytes, 1ull << 30) << device.name;
        EXPECT_GE(device.capability, std::string("7.5")) << device.name;
    }
    EXPECT_EQ(gpus, cw::kernels::cudaDeviceCount());
}
