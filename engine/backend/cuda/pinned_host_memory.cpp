#include "engine/backend/cuda/pinned_host_memory.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <utility>

namespace cw::engine {

namespace {

constexpr std::size_t kHugePage = std::size_t(2) << 20;

std::string cudaText(cudaError_t e)
{
    return std::string(cudaGetErrorString(e));
}

} // namespace

bool PinnedHostMemory::hugePagesWanted()
{
    static const bool wanted = [] {
        const char* v = std::getenv("CW_CUDA_HOST_PAGES"); // checked: kernels/switches
        return v && std::strcmp(v, "huge") == 0;
    }();
    return wanted;
}

Result<PinnedHostMemory> PinnedHostMemory::allocate(
    std::size_t bytes, bool hugePages, const char* what)
{
    PinnedHostMemory m;
    if (!hugePages) {
        if (auto e = cudaHostAlloc(&m.m_data, bytes, cudaHostAllocMapped); e != cudaSuccess) {
            cudaGetLastError();
            m.m_data = nullptr;
            return makeError(
                std::string("could not pin host memory for ") + what + ": " + cudaText(e));
        }
        m.m_bytes = bytes;
        m.m_kind = Kind::Driver;
        return m;
    }
    // Over-asked by a page so the range can start on a 2 MiB boundary, where the kernel can
    // back it with whole huge pages; the slack is unmapped again.
    const std::size_t size = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE,
        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
        return makeError(std::string("could not map host memory for ") + what);
    auto* begin = static_cast<std::byte*>(raw);
    auto* aligned = reinterpret_cast<std::byte*>(
        (reinterpret_cast<std::uintptr_t>(begin) + kHugePage - 1) / kHugePage * kHugePage);
    if (aligned > begin)
        munmap(begin, std::size_t(aligned - begin));
    if (std::byte* end = aligned + size; end < begin + size + kHugePage)
        munmap(end, std::size_t(begin + size + kHugePage - end));
    m.m_data = aligned;
    m.m_bytes = size;
    m.m_kind = Kind::Mapping;
    m.m_huge = madvise(aligned, size, MADV_HUGEPAGE) == 0;
    // Touched before registering, so each fault takes a huge page where one is free.
    for (std::size_t at = 0; at < size; at += 4096)
        aligned[at] = std::byte { 0 };
    if (auto e = cudaHostRegister(aligned, size, cudaHostRegisterMapped); e != cudaSuccess) {
        cudaGetLastError();
        return makeError(std::string("could not pin host memory for ") + what + ": " + cudaText(e));
    }
    m.m_kind = Kind::Registered;
    return m;
}

PinnedHostMemory::PinnedHostMemory(PinnedHostMemory&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr))
    , m_bytes(std::exchange(other.m_bytes, 0))
    , m_kind(std::exchange(other.m_kind, Kind::None))
    , m_huge(std::exchange(other.m_huge, false))
{
}

PinnedHostMemory& PinnedHostMemory::operator=(PinnedHostMemory&& other) noexcept
{
    if (this != &other) {
        release();
        m_data = std::exchange(other.m_data, nullptr);
        m_bytes = std::exchange(other.m_bytes, 0);
        m_kind = std::exchange(other.m_kind, Kind::None);
        m_huge = std::exchange(other.m_huge, false);
    }
    return *this;
}

PinnedHostMemory::~PinnedHostMemory()
{
    release();
}

void PinnedHostMemory::release()
{
    if (m_kind == Kind::Driver)
        cudaFreeHost(m_data);
    if (m_kind == Kind::Registered)
        cudaHostUnregister(m_data);
    if (m_kind == Kind::Registered || m_kind == Kind::Mapping)
        munmap(m_data, m_bytes);
    m_data = nullptr;
    m_kind = Kind::None;
}

} // namespace cw::engine
