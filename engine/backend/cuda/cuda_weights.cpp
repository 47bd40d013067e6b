#include "engine/backend/cuda/cuda_weights.h"

#include <cuda_runtime_api.h>
#include <map>

namespace cw::engine {

namespace cuda = kernels::cuda;

namespace {

std::uint64_t matrixBytes(const WeightMatrix& m)
{
    return m.valid() ? std::uint64_t(m.rows) * m.rowStride : 0;
}

std::uint64_t stackBytes(const ExpertStack& s)
{
    if (!s.view)
        return 0;
    const auto stride = *kernels::rowBytes(s.view->type, std::uint64_t(s.view->ne[0]));
    return stride * std::uint64_t(s.view->ne[1]) * std::uint64_t(s.view->ne[2]);
}

std::uint64_t floats(const std::vector<float>& v)
{
    return v.size() * sizeof(float);
}

// Uploads each distinct host buffer once (gate and up share a fused stack; tied embeddings
// share the output matrix).
class Uploader {
public:
    explicit Uploader(DeviceArena& arena)
        : m_arena(arena)
    {
    }

    Result<cuda::DeviceMatrix> matrix(const WeightMatrix& m, const std::string& what)
    {
        cuda::DeviceMatrix d;
        if (!m.valid())
            return d;
        auto p = copy(m.data, std::size_t(matrixBytes(m)), what);
        if (!p)
            return p.error();
        d.type = m.type;
        d.data = *p;
        d.rowStride = m.rowStride;
        d.rows = m.rows;
        d.cols = m.cols;
        m_matrixBytes += matrixBytes(m);
        return d;
    }

    Result<cuda::DeviceExpertStack> experts(const ExpertStack& s, const std::string& what)
    {
        cuda::DeviceExpertStack d;
        const TensorView& v = *s.view;
        const std::size_t rowStride
            = std::size_t(*kernels::rowBytes(v.type, std::uint64_t(v.ne[0])));
        const std::size_t expertBytes = rowStride * std::size_t(v.ne[1]);
        const std::int64_t count = v.ne[2];
        auto found = m_uploaded.find(v.data);
        void* base = nullptr;
        if (found != m_uploaded.end()) {
            base = found->second;
        } else {
            auto p = m_arena.allocate(expertBytes * std::size_t(count), what);
            if (!p)
                return p.error();
            base = *p;
            for (std::int64_t e = 0; e < count; ++e) {
                const cudaError_t err
                    = cudaMemcpy(static_cast<std::byte*>(base) + expertBytes * std::size_t(e),
                        v.slice(e), expertBytes, cudaMemcpyHostToDevice);
                if (err != cudaSuccess)
                    return cudaFailure("uploading " + what, err);
            }
            m_uploaded[v.data] = base;
            m_matrixBytes += expertBytes * std::uint64_t(count);
        }
        d.type = v.type;
        d.data = base;
        d.expertStride = expertBytes;
        d.rowStride = rowStride;
        d.rowOffset = s.rowOffset;
        d.rows = s.rows;
        d.cols = s.cols;
        d.experts = count;
        return d;
    }

    Result<const float*> vector(const std::vector<float>& v, const std::string& what)
    {
        if (v.empty())
            return static_cast<const float*>(nullptr);
        auto p = m_arena.allocate(v.size() * sizeof(float), what);
        if (!p)
            return p.error();
        const cudaError_t err
            = cudaMemcpy(*p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice);
        if (err != cudaSuccess)
            return cudaFailure("uploading " + what, err);
        m_vectorBytes += floats(v);
        return static_cast<const float*>(*p);
    }

    std::uint64_t matrixBytesTotal() const { return m_matrixBytes; }
    std::uint64_t vectorBytesTotal() const { return m_vectorBytes; }

private:
    Result<void*> copy(const std::byte* host, std::size_t bytes, const std::string& what)
    {
        auto found = m_uploaded.find(host);
        if (found != m_uploaded.end())
            return found->second;
        auto p = m_arena.allocate(bytes, what);
        if (!p)
            return p.error();
        const cudaError_t err = cudaMemcpy(*p, host, bytes, cudaMemcpyHostToDevice);
        if (err != cudaSuccess)
            return cudaFailure("uploading " + what, err);
        m_uploaded[host] = *p;
        return *p;
    }

    DeviceArena& m_arena;
    std::map<const std::byte*, void*> m_uploaded;
    std::uint64_t m_matrixBytes = 0;
    std::uint64_t m_vectorBytes = 0;
};

#define CW_UPLOAD(target, expr)                                                                    \
    do {                                                                                           \
        auto cwResult = (expr);                                                                    \
        if (!cwResult)                                                                             \
            return cwResult.error();                                                               \
        target = *cwResult;                                                                        \
    } while (0)

} // namespace

std::uint64_t deviceWeightBytes(const ModelWeights& w)
{
    std::map<const void*, std::uint64_t> distinct;
    auto add = [&](const void* key, std::uint64_t bytes) {
        if (key)
            distinct[key] = bytes;
    };
    add(w.embedding ? w.embedding->data : nullptr, w.embedding ? w.embedding->bytes : 0);
    add(w.output.data, matrixBytes(w.output));
    std::uint64_t total = floats(w.outputNorm) + floats(w.ropeInvFreq);
    for (const auto& L : w.layers) {
        total += floats(L.inputNorm) + floats(L.postAttentionNorm);
        for (const WeightMatrix* m :
            { &L.attention.q, &L.attention.k, &L.attention.v, &L.attention.o, &L.deltaNet.qkv,
                &L.deltaNet.z, &L.deltaNet.beta, &L.deltaNet.alpha, &L.deltaNet.out, &L.moe.router,
                &L.moe.sharedGateProj, &L.moe.sharedUp, &L.moe.sharedDown })
            add(m->data, matrixBytes(*m));
        for (const ExpertStack* s : { &L.moe.gate, &L.moe.up, &L.moe.down })
            add(s->view ? s->view->data : nullptr, stackBytes(*s));
        total += floats(L.attention.qNorm) + floats(L.attention.kNorm) + floats(L.deltaNet.conv)
            + floats(L.deltaNet.dtBias) + floats(L.deltaNet.negA) + floats(L.deltaNet.norm)
            + floats(L.moe.sharedGate);
    }
    for (const auto& [key, bytes] : distinct)
        total += bytes;
    return total;
}

Result<CudaWeights> uploadWeights(
    const ModelWeights& w, DeviceArena& arena, const std::vector<bool>& expertsElsewhere)
{
    Uploader up(arena);
    CudaWeights d;
    WeightMatrix embedding;
    embedding.type = w.embedding->type;
    embedding.data = w.embedding->data;
    embedding.cols = w.embedding->ne[0];
    embedding.rows = w.embedding->ne[1];
    embedding.rowStride
        = std::size_t(*kernels::rowBytes(embedding.type, std::uint64_t(embedding.cols)));
    CW_UPLOAD(d.embedding, up.matrix(embedding, "the token embeddings"));
    CW_UPLOAD(d.output, up.matrix(w.output, "the output head"));
    CW_UPLOAD(d.outputNorm, up.vector(w.outputNorm, "the output norm"));
    CW_UPLOAD(d.ropeInvFreq, up.vector(w.ropeInvFreq, "the rotary frequencies"));
    for (std::size_t il = 0; il < w.layers.size(); ++il) {
        const LayerWeights& L = w.layers[il];
        const std::string name = "layer " + std::to_string(il);
        CudaLayerWeights c;
        CW_UPLOAD(c.inputNorm, up.vector(L.inputNorm, name + " input norm"));
        CW_UPLOAD(
            c.postAttentionNorm, up.vector(L.postAttentionNorm, name + " post-attention norm"));
        if (L.kind == LayerKind::FullAttention) {
            const auto& a = L.attention;
            CW_UPLOAD(c.q, up.matrix(a.q, name + " attention q"));
            CW_UPLOAD(c.k, up.matrix(a.k, name + " attention k"));
            CW_UPLOAD(c.v, up.matrix(a.v, name + " attention v"));
            CW_UPLOAD(c.o, up.matrix(a.o, name + " attention output"));
            CW_UPLOAD(c.qNorm, up.vector(a.qNorm, name + " q norm"));
            CW_UPLOAD(c.kNorm, up.vector(a.kNorm, name + " k norm"));
        } else {
            const auto& n = L.deltaNet;
            CW_UPLOAD(c.qkv, up.matrix(n.qkv, name + " DeltaNet qkv"));
            CW_UPLOAD(c.z, up.matrix(n.z, name + " DeltaNet gate"));
            CW_UPLOAD(c.beta, up.matrix(n.beta, name + " DeltaNet beta"));
            CW_UPLOAD(c.alpha, up.matrix(n.alpha, name + " DeltaNet alpha"));
            CW_UPLOAD(c.out, up.matrix(n.out, name + " DeltaNet output"));
            CW_UPLOAD(c.conv, up.vector(n.conv, name + " conv1d"));
            CW_UPLOAD(c.dtBias, up.vector(n.dtBias, name + " dt bias"));
            CW_UPLOAD(c.negA, up.vector(n.negA, name + " decay"));
            CW_UPLOAD(c.deltaNorm, up.vector(n.norm, name + " gated norm"));
        }
        const auto& m = L.moe;
        CW_UPLOAD(c.router, up.matrix(m.router, name + " router"));
        const bool elsewhere = il < expertsElsewhere.size() && expertsElsewhere[il];
        if (m.gate.view && !elsewhere) {
            CW_UPLOAD(c.gate, up.experts(m.gate, name + " expert gates"));
            CW_UPLOAD(c.up, up.experts(m.up, name + " expert ups"));
            CW_UPLOAD(c.down, up.experts(m.down, name + " expert downs"));
        }
        if (m.hasShared()) {
            CW_UPLOAD(c.sharedGate, up.vector(m.sharedGate, name + " shared-expert gate"));
            CW_UPLOAD(c.sharedGateProj, up.matrix(m.sharedGateProj, name + " shared gate"));
            CW_UPLOAD(c.sharedUp, up.matrix(m.sharedUp, name + " shared up"));
            CW_UPLOAD(c.sharedDown, up.matrix(m.sharedDown, name + " shared down"));
        }
        d.layers.push_back(c);
    }
    d.matrixBytes = up.matrixBytesTotal();
    d.vectorBytes = up.vectorBytesTotal();
    return d;
}

} // namespace cw::engine
