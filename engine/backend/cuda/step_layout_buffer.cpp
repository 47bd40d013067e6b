#include "engine/backend/cuda/step_layout_buffer.h"

#include <algorithm>
#include <cstring>

namespace cw::engine {

namespace {
constexpr std::size_t kDrawWords = sizeof(kernels::TokenDraw) / sizeof(std::int32_t);
} // namespace

StepLayoutBuffer::~StepLayoutBuffer()
{
    if (m_host)
        cudaFreeHost(m_host);
}

Result<void> StepLayoutBuffer::allocate(std::int64_t rowCapacity, std::int32_t sequenceCapacity,
    std::int32_t blocksPerSequence, DeviceArena& arena)
{
    m_rowCapacity = rowCapacity;
    m_sequenceCapacity = sequenceCapacity;
    m_blocksPerSequence = blocksPerSequence;
    static_assert(sizeof(kernels::TokenDraw) % sizeof(std::int32_t) == 0);
    const std::size_t values = std::size_t(4 * rowCapacity) + std::size_t(rowCapacity) * kDrawWords
        + std::size_t(sequenceCapacity) * std::size_t(4 + blocksPerSequence);
    if (auto e = cudaMallocHost(reinterpret_cast<void**>(&m_host), values * sizeof(std::int32_t));
        e != cudaSuccess)
        return cudaFailure("pinned host memory for the step layout", e);
    auto device = arena.allocate(values * sizeof(std::int32_t), "the step layout");
    if (!device)
        return device.error();
    m_device = static_cast<std::int32_t*>(*device);
    return {};
}

kernels::cuda::StepLayout StepLayoutBuffer::pack(
    const BackendStep& step, std::int32_t maxContext, bool decode)
{
    kernels::cuda::StepLayout layout;
    const std::int32_t T = std::int32_t(step.tokens.size());
    const std::int32_t S = std::int32_t(step.sequences.size());
    layout.rows = T;
    layout.sequences = S;
    layout.blocksPerSequence = m_blocksPerSequence;
    layout.maxContext = maxContext;
    std::int32_t maxTokens = 0, longest = 0;
    for (const auto& s : step.sequences) {
        maxTokens = std::max(maxTokens, std::int32_t(s.n));
        longest = std::max(longest, std::int32_t(s.pos0 + s.n));
    }
    layout.maxTokensPerSequence = decode ? 1 : maxTokens;
    if (!decode)
        layout.maxContext = longest; // eager steps size grids from what they hold
    std::size_t at = 0;
    auto take = [&](std::size_t n) {
        const std::size_t first = at;
        at += n;
        return first;
    };
    const std::size_t tokens = take(std::size_t(T)), rowSeq = take(std::size_t(T)),
                      rowPos = take(std::size_t(T)), logit = take(step.logitRows.size()),
                      seqRow0 = take(std::size_t(S)), seqTokens = take(std::size_t(S)),
                      seqPos0 = take(std::size_t(S)), slots = take(std::size_t(S)),
                      tables = take(std::size_t(S) * std::size_t(m_blocksPerSequence)),
                      draws = take(step.draws.size() * kDrawWords);
    std::copy(step.tokens.begin(), step.tokens.end(), m_host + tokens);
    for (std::int32_t i = 0; i < S; ++i) {
        const auto& s = step.sequences[std::size_t(i)];
        m_host[seqRow0 + std::size_t(i)] = std::int32_t(s.row0);
        m_host[seqTokens + std::size_t(i)] = std::int32_t(s.n);
        m_host[seqPos0 + std::size_t(i)] = std::int32_t(s.pos0);
        m_host[slots + std::size_t(i)] = s.stateSlot;
        for (std::int64_t r = 0; r < s.n; ++r) {
            m_host[rowSeq + std::size_t(s.row0 + r)] = i;
            m_host[rowPos + std::size_t(s.row0 + r)] = std::int32_t(s.pos0 + r);
        }
        std::int32_t* table = m_host + tables + std::size_t(i) * std::size_t(m_blocksPerSequence);
        std::fill(table, table + m_blocksPerSequence, 0);
        if (s.kvBlocks)
            std::copy_n(s.kvBlocks->begin(),
                std::min<std::size_t>(s.kvBlocks->size(), std::size_t(m_blocksPerSequence)), table);
    }
    for (std::size_t i = 0; i < step.logitRows.size(); ++i)
        m_host[logit + i] = std::int32_t(step.logitRows[i]);
    if (!step.draws.empty())
        std::memcpy(
            m_host + draws, step.draws.data(), step.draws.size() * sizeof(kernels::TokenDraw));
    m_used = at;
    layout.tokens = m_device + tokens;
    layout.rowSeq = m_device + rowSeq;
    layout.rowPos = m_device + rowPos;
    layout.seqRow0 = m_device + seqRow0;
    layout.seqTokens = m_device + seqTokens;
    layout.seqPos0 = m_device + seqPos0;
    layout.stateSlots = m_device + slots;
    layout.blockTables = m_device + tables;
    m_logitRows = m_device + logit;
    m_draws = step.draws.empty() ? nullptr
                                 : reinterpret_cast<const kernels::TokenDraw*>(m_device + draws);
    return layout;
}

cudaError_t StepLayoutBuffer::upload(cudaStream_t stream)
{
    return cudaMemcpyAsync(
        m_device, m_host, m_used * sizeof(std::int32_t), cudaMemcpyHostToDevice, stream);
}

} // namespace cw::engine
