#pragma once

namespace cw::kernels {

// Instruction-set extensions of the processor we run on, read once. The kernels pick their
// AVX2 paths from this at run time, so one binary runs on any x86-64.
struct CpuFeatures {
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool avx512f = false;
    bool avx512bw = false; // byte/word operations on 512-bit registers
    bool avx512vnni = false; // vpdpwssd/vpdpbusd: integer products added in one instruction
};

const CpuFeatures& cpuFeatures();

} // namespace cw::kernels
