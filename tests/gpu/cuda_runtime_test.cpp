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
        // "10.0" sorts before "7.5" as text: compare the numbers.
        const auto dot = device.capability.find('.');
        ASSERT_NE(dot, std::string::npos) << device.capability;
        const int major = std::stoi(device.capability.substr(0, dot));
        const int minor = std::stoi(device.capability.substr(dot + 1));
        EXPECT_GE(major * 10 + minor, 75) << device.name << " " << device.capability;
    }
    EXPECT_EQ(gpus, cw::kernels::cudaDeviceCount());
}
