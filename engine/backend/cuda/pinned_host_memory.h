#pragma once

// Page-locked host memory the GPU maps (the offloaded experts' copies, expert_cache.h), in one
// of two kinds: the driver's (cudaHostAlloc), or anonymous memory asked for in 2 MiB pages
// (transparent huge pages, where the kernel has them) and then registered with the driver. The
// CPU computing host experts and the GPU reading them in place both walk these pages, and in a
// virtual machine a translation miss on a 4 KiB page may cost a nested page walk (CPU) or an
// IOMMU lookup (GPU); a 2 MiB page holds an expert and more. Which kind is CW_CUDA_HOST_PAGES
// (kernels/switches): `driver` (default) or `huge`, an A/B until measured on the card.

#include "engine/common/result.h"

#include <cstddef>
#include <cuda_runtime.h>

namespace cw::engine {

class PinnedHostMemory {
public:
    // Whether CW_CUDA_HOST_PAGES asks for huge pages (read once per process).
    static bool hugePagesWanted();

    // `bytes` of mapped page-locked memory; `what` names it in the error.
    static Result<PinnedHostMemory> allocate(std::size_t bytes, bool hugePages, const char* what);

    PinnedHostMemory() = default;
    PinnedHostMemory(PinnedHostMemory&& other) noexcept;
    PinnedHostMemory& operator=(PinnedHostMemory&& other) noexcept;
    PinnedHostMemory(const PinnedHostMemory&) = delete;
    PinnedHostMemory& operator=(const PinnedHostMemory&) = delete;
    ~PinnedHostMemory();

    void* data() const { return m_data; }
    // Whether huge pages were asked for and the kernel took the advice (it may still back some
    // of the range with 4 KiB pages); false for the driver's memory.
    bool hugePages() const { return m_huge; }

private:
    enum class Kind { None, Driver, Mapping, Registered };
    void release();
    void* m_data = nullptr;
    std::size_t m_bytes = 0; // of the mapping (huge pages: rounded up to 2 MiB)
    Kind m_kind = Kind::None;
    bool m_huge = false;
};

} // namespace cw::engine
