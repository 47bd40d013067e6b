// The message when the CUDA runtime will not start names the actual cause: a machine without
// the NVIDIA driver is told so, not that its "driver version is insufficient".
#include "engine/backend/cuda_start_error.h"

#include <gtest/gtest.h>

using cw::engine::classifyCudaStartFailure;
using cw::engine::cudaStartErrorMessage;
using cw::engine::CudaStartFailure;

TEST(CudaStartError, insufficientDriverWithoutADriverMeansNoDriver)
{
    EXPECT_EQ(classifyCudaStartFailure(true, false, false), CudaStartFailure::NoDriver);
    EXPECT_EQ(classifyCudaStartFailure(true, false, true), CudaStartFailure::OldDriver);
    EXPECT_EQ(classifyCudaStartFailure(false, true, true), CudaStartFailure::NoDevice);
    // A container may hide /proc/driver: that alone is not "no driver".
    EXPECT_EQ(classifyCudaStartFailure(false, true, false), CudaStartFailure::NoDevice);
    EXPECT_EQ(classifyCudaStartFailure(false, false, true), CudaStartFailure::Other);
}

TEST(CudaStartError, messagesSayWhatToDo)
{
    const std::string none = cudaStartErrorMessage(CudaStartFailure::NoDriver, 13000,
        "CUDA driver version is insufficient for CUDA runtime version");
    EXPECT_NE(none.find("no NVIDIA driver is loaded"), std::string::npos) << none;
    EXPECT_EQ(none.find("insufficient"), std::string::npos) << none;
    EXPECT_NE(none.find("--device cpu"), std::string::npos) << none;
    const std::string old = cudaStartErrorMessage(CudaStartFailure::OldDriver, 12040, "");
    EXPECT_NE(old.find("older than this build needs (CUDA 12.4)"), std::string::npos) << old;
    const std::string other
        = cudaStartErrorMessage(CudaStartFailure::Other, 13000, "unknown error");
    EXPECT_NE(other.find("(unknown error)"), std::string::npos) << other;
}
