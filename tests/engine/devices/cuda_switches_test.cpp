// The CW_CUDA_ switches: one list, checked names and values, and kernels/cuda/PERFORMANCE.md's
// table the same as the list.
#include "kernels/switches/cuda_switches.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using cw::kernels::cudaSwitchError;

namespace {

std::optional<std::string> check(std::vector<std::string> environment)
{
    return cudaSwitchError(environment);
}

} // namespace

TEST(CudaSwitches, knownNamesAndValuesPass)
{
    EXPECT_EQ(check({ "PATH=/usr/bin", "CW_CUDA_INTMV=warp2", "CW_CUDA_INTMM=8192",
                  "CW_CUDA_MATVEC=mma", "CW_CUDA_CHAINED=0", "CW_CUDA_MOE=direct",
                  "CW_CUDA_EXACT_ATTENTION=1", "CW_CUDA_PROFILE_STEP=3",
                  "CW_CUDA_ARCHITECTURES=80;86;89;90" }),
        std::nullopt);
}

TEST(CudaSwitches, anUnknownNameIsRefusedNamingIt)
{
    const auto error = check({ "CW_CUDA_INTMVV=warp" });
    ASSERT_TRUE(error);
    EXPECT_EQ(error->rfind("CW_CUDA_INTMVV is not a switch of this engine (they are "
                           "CW_CUDA_PROFILE_STEP, ",
                  0),
        0u)
        << *error;
}

TEST(CudaSwitches, aValueOutsideTheChoicesIsRefusedNamingThem)
{
    EXPECT_EQ(check({ "CW_CUDA_INTMV=wrap" }),
        "CW_CUDA_INTMV=wrap: must be one of block, warp, warp2, staged");
    EXPECT_EQ(check({ "CW_CUDA_INTMM=large" }),
        "CW_CUDA_INTMM=large: must be a whole number, 0 or more");
    EXPECT_EQ(check({ "CW_CUDA_INTMM=" }), "CW_CUDA_INTMM=: must be a whole number, 0 or more");
    EXPECT_EQ(check({ "CW_CUDA_CHAINED=off" }), "CW_CUDA_CHAINED=off: must be one of 0, 1");
}

TEST(CudaSwitches, theSkipSwitchIsForBenchmarkBuildsOnly)
{
    const auto error = check({ "CW_CUDA_SKIP=attention,routed" });
    if (cw::kernels::benchmarkSwitchesBuiltIn()) {
        EXPECT_EQ(error, std::nullopt);
        EXPECT_TRUE(check({ "CW_CUDA_SKIP=attention,experts" }));
    } else {
        ASSERT_TRUE(error);
        EXPECT_NE(error->find("benchmark builds only (cmake -DCW_BENCHMARK_SWITCHES=ON)"),
            std::string::npos)
            << *error;
    }
}

TEST(CudaSwitches, performanceNotesListTheSameSwitches)
{
    std::ifstream notes(CW_SOURCE_DIR "/kernels/cuda/PERFORMANCE.md");
    ASSERT_TRUE(notes) << "kernels/cuda/PERFORMANCE.md";
    std::stringstream text;
    text << notes.rdbuf();
    const std::string all = text.str();
    const std::string begin = "<!-- cuda-switches: the table of kernels/switches/cuda_switches.cpp -->\n";
    const std::string end = "<!-- cuda-switches end -->";
    const auto from = all.find(begin);
    const auto to = all.find(end);
    ASSERT_NE(from, std::string::npos) << "the table's start marker";
    ASSERT_NE(to, std::string::npos) << "the table's end marker";
    EXPECT_EQ(all.substr(from + begin.size(), to - from - begin.size()),
        cw::kernels::cudaSwitchTable())
        << "kernels/cuda/PERFORMANCE.md's switch table differs from the list; paste this "
           "between its markers:\n"
        << cw::kernels::cudaSwitchTable();
}
