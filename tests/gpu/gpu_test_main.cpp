// main() for tests labelled gpu: without a CUDA device the test reports itself skipped.
#include "kernels/compute_devices.h"

#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char** argv)
{
    if (cw::kernels::cudaDeviceCount() == 0) {
        std::printf("no CUDA device: skipping\n");
        return 77;
    }
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
