#include "kernels/cpu/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace cw::kernels {

namespace {

CpuFeatures detect()
{
    CpuFeatures features;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    features.avx2 = __builtin_cpu_supports("avx2");
    features.fma = __builtin_cpu_supports("fma");
    features.avx512f = __builtin_cpu_supports("avx512f");
    features.avx512bw = __builtin_cpu_supports("avx512bw");
    features.avx512vnni = __builtin_cpu_supports("avx512vnni");
    // Clang's __builtin_cpu_supports knows no "f16c": read CPUID leaf 1, ECX bit 29.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    features.f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
#endif
    return features;
}

} // namespace

const CpuFeatures& cpuFeatures()
{
    static const CpuFeatures features = detect();
    return features;
}

} // namespace cw::kernels
