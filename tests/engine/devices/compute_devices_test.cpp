#include "kernels/compute_devices.h"

#include <gtest/gtest.h>

TEST(ComputeDevices, listsTheCpuFirst)
{
    const auto devices = cw::kernels::listComputeDevices();
    ASSERT_FALSE(devices.empty());
    EXPECT_EQ(devices.front().kind, cw::kernels::DeviceKind::Cpu);
    EXPECT_GT(devices.front().computeUnits, 0);
    EXPECT_GT(devices.front().memoryBytes, 0u);
}

TEST(ComputeDevices, countsCudaDevicesWithoutCrashingWhenNoneExist)
{
    const auto devices = cw::kernels::listComputeDevices();
    EXPECT_EQ(int(devices.size()) - 1, cw::kernels::cudaDeviceCount());
}
