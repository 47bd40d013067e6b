#include "engine/backend/cuda/cuda_backend.h"

#include "engine/backend/cuda/cuda_kv_store.h"
#include "engine/backend/cuda/cuda_weights.h"
#include "engine/backend/cuda/decode_view_trial.h"
#include "engine/backend/cuda/device_memory.h"
#include "engine/backend/cuda/expert_cache.h"
#include "engine/backend/cuda/step_layout_buffer.h"
#include "engine/backend/cuda_start_error.h"
#include "engine/backend/expert_placement.h"
#include "engine/model/model_description.h"
#include "engine/models/model_weights.h"
#include "kernels/cuda/attention/paged_attention.h"
#include "kernels/cuda/deltanet/gated_delta_net.h"
#include "kernels/cuda/moe/moe_experts.h"
#include "kernels/cuda/ops/row_ops.h"
#include "kernels/cuda/ops/token_draw.h"
#include "kernels/cuda/quant/quant_products.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cublas_v2.h>
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>
#include <functional>
#include <initializer_list>
#include <map>
#include <set>
#include <source_location>
#include <utility>

namespace cw::engine {

namespace cuda = kernels::cuda;

namespace {

// CW_CUDA_PROFILE_STEP=N brackets the N-th forward step (counted from 1 over the process) with
// cudaProfilerStart/Stop, so `ncu --profile-from-start off` records exactly one step's kernels.
long profiledStep()
{
    const char* v = std::getenv("CW_CUDA_PROFILE_STEP");
    return v ? std::strtol(v, nullptr, 10) : 0;
}
const long g_profiledStep = profiledStep();
long g_stepsRun = 0;

// CW_CUDA_SKIP=attention,deltanet,routed,shared,norm leaves those ops out of every step, to
// time what each costs inside a replayed graph (diagnosis only: the tokens are then garbage,
// and the finite check is off).
struct SkippedOps {
    bool attention = false, deltaNet = false, routed = false, shared = false, norm = false;
    bool any() const { return attention || deltaNet || routed || shared || norm; }
};
SkippedOps skippedOps()
{
    SkippedOps skip;
#if defined(CW_BENCHMARK_SWITCHES) // a product build cannot be told to compute garbage
    const char* v = std::getenv("CW_CUDA_SKIP");
    const std::string list = v ? v : "";
    auto has = [&](const char* name) { return list.find(name) != std::string::npos; };
    skip.attention = has("attention");
    skip.deltaNet = has("deltanet");
    skip.routed = has("routed");
    skip.shared = has("shared");
    skip.norm = has("norm");
#endif
    return skip;
}
const SkippedOps g_skip = skippedOps();

// Decode batches replayed from captured graphs (larger ones are not). 64: not measured; chosen
// by reasoning (the recorded benchmarks run at most 32 sequences).
constexpr int kMaxGraphBatch = 64;
// Steps between expert-cache refreshes at the most (a refresh pauses for its copies, up to
// ~20 ms; not measured as a trade-off, chosen so that a refresh is rare beside the steps).
constexpr std::int64_t kRefreshSteps = 256;

// The layer temporaries are carved into consecutive slices, each on a 128-byte boundary: the
// row kernels read float4s and refuse a misaligned pointer. Packed end to end, one token's
// router logits, top-k weights and ids (12 + 3 + 3 floats, say) left the shared expert's output
// misaligned, and the first decode step failed with cudaErrorInvalidValue.
constexpr std::int64_t kTempAlignFloats = 32;
constexpr std::size_t kTempSlices = 6; // the most any layer takes (the MoE block's)

class TempSlices {
public:
    explicit TempSlices(float* base)
        : m_next(base)
    {
    }
    float* take(std::int64_t floats)
    {
        float* slice = m_next;
        m_next += (floats + kTempAlignFloats - 1) / kTempAlignFloats * kTempAlignFloats;
        return slice;
    }

private:
    float* m_next;
};
constexpr std::size_t kCublasWorkspace = 32u << 20;

std::string gib(std::uint64_t bytes)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.2f GiB", double(bytes) / double(1ull << 30));
    return text;
}

cuda::GemmPrecision precisionFrom(const std::string& name)
{
    if (name == "f32")
        return cuda::GemmPrecision::Float32;
    if (name == "tf32")
        return cuda::GemmPrecision::TensorFloat32;
    return cuda::GemmPrecision::BFloat16;
}

class CudaBackend final : public Backend {
public:
    CudaBackend(const ModelDescription& description, const ModelWeights& weights,
        const CudaBackendOptions& options)
        : m_description(description)
        , m_hostWeights(weights)
        , m_options(options)
        , m_precision(precisionFrom(options.precision))
    {
    }

    ~CudaBackend() override
    {
        for (auto& [key, graph] : m_graphs)
            cudaGraphExecDestroy(graph);
        if (m_cublas)
            cublasDestroy(m_cublas);
        if (m_fork)
            cudaEventDestroy(m_fork);
        if (m_join)
            cudaEventDestroy(m_join);
        if (m_sideStream)
            cudaStreamDestroy(m_sideStream);
        if (m_hostFork)
            cudaEventDestroy(m_hostFork);
        if (m_hostJoin)
            cudaEventDestroy(m_hostJoin);
        for (cudaEvent_t e : { m_viewStart, m_viewStop })
            if (e)
                cudaEventDestroy(e);
        if (m_hostStream)
            cudaStreamDestroy(m_hostStream);
        if (m_stream)
            cudaStreamDestroy(m_stream);
        if (m_logitsHost)
            cudaFreeHost(m_logitsHost);
    }

    Result<void> initialise();

    std::string deviceName() const override
    {
        return std::string(m_prop.name) + " (cuda:" + std::to_string(m_options.device) + ")";
    }
    bool isGpu() const override { return true; }
    std::string memoryPlan() const override
    {
        std::string out = m_plan;
        for (const std::string& more :
            { m_expertCache ? m_expertCache->activity() : std::string(), m_viewTrial.describe() })
            if (!more.empty())
                out += "; " + more;
        return out;
    }
    std::uint64_t peakMemoryBytes() const override { return m_arena.bytes() + m_contextBytes; }
    KvBlockStore& kvStore() override { return *m_kv; }

    Result<int> newState() override;
    Result<int> copyState(int from) override;
    void releaseState(int slot) override { m_stateUsed[std::size_t(slot)] = false; }

    Result<void> beginStep(const BackendStep& step) override;
    void embed() override;
    void norm(NormSite site, bool addResidual) override;
    void attention(int layer) override;
    void deltaNet(int layer) override;
    void moe(int layer) override;
    Result<StepOutput> finishStep() override;
    Result<std::vector<float>> keptLogits(std::span<const std::int64_t> rows) override;
    std::int64_t keptLogitRows() const override { return m_logitPass; }

    const StepTimers& stepTimers() const override { return m_timers; }
    void resetStepTimers() override { m_timers.reset(); }

private:
    using Op = std::function<void()>;

    Result<void> checkDevice();
    std::size_t scratchBytes(std::int64_t rows) const;
    Result<void> allocateBuffers();
    // Keeps the step's first error and where it was met (the message names the line).
    void check(cudaError_t error, std::source_location where = std::source_location::current());
    void linear(const cuda::DeviceMatrix& w, const float* x, std::int64_t xStride,
        std::int64_t rows, float* y, std::int64_t yStride);
    // Products of the normed rows (the layer's input) with several matrices.
    void linearFanOut(std::initializer_list<cuda::LinearOutput> outputs);
    // The same on another stream and scratch (the products stay under kMatVecMaxTokens rows
    // there, so the cuBLAS handle, bound to m_stream, is not used).
    void linearFanOut(std::initializer_list<cuda::LinearOutput> outputs, cudaStream_t stream,
        cuda::DeviceScratch scratch);
    // Small steps read the normed rows through the integer products: the RMSNorm quantizes
    // them once, in m_normedQuant, rather than every product on its own (sized for
    // kMatVecMaxTokens rows: a limit, not tuned).
    bool normedRowsQuantized() const
    {
        return m_normedQuant.q && m_layout.rows <= cuda::kMatVecMaxTokens
            && m_precision != cuda::GemmPrecision::Float32;
    }
    void runOps();
    bool runStep(); // true: every logit row was computed with the step
    void computeLogits(std::int64_t first, std::int64_t count);

    const ModelDescription& m_description;
    const ModelWeights& m_hostWeights;
    CudaBackendOptions m_options;
    cuda::GemmPrecision m_precision;
    cudaDeviceProp m_prop {};
    std::uint64_t m_contextBytes = 0; // what the CUDA context itself took at start
    DeviceArena m_arena;
    // Declared after the arena: destroyed first, while its counts are still readable.
    std::unique_ptr<ExpertCache> m_expertCache; // null: every expert on the GPU
    std::vector<bool> m_stagedLayers; // this step: layers whose host experts are copied first
    std::vector<bool> m_hostLayers; // this step: layers whose host experts the CPU computes
    cudaStream_t m_hostStream = nullptr; // the host experts' copies and host function
    cudaEvent_t m_hostFork = nullptr, m_hostJoin = nullptr;
    // Decode steps: host views or none, as timed (decode_view_trial.h).
    DecodeViewTrial m_viewTrial;
    cudaEvent_t m_viewStart = nullptr, m_viewStop = nullptr;
    // The step's view of its host experts: InPlace unless some layer takes a host view.
    DecodeViewTrial::View m_stepView = DecodeViewTrial::InPlace;
    bool m_viewTimed = false; // this step's graph launch is one of the trial's
    bool m_viewTimeRecorded = false;
    std::int64_t m_stepsSinceRefresh = 0;
    CudaWeights m_w;
    cudaStream_t m_stream = nullptr;
    cudaStream_t m_sideStream = nullptr; // the shared expert beside the routed ones (decode)
    cudaEvent_t m_fork = nullptr, m_join = nullptr;
    cuda::DeviceScratch m_sideScratch; // the side stream's products' scratch
    cublasHandle_t m_cublas = nullptr;
    std::unique_ptr<CudaKvStore> m_kv;
    cuda::PagedKv m_pagedKv;
    std::vector<cuda::DeltaNetStates> m_states; // per DeltaNet layer
    std::vector<bool> m_stateUsed;
    std::size_t m_convFloats = 0, m_recurrentFloats = 0; // per slot and layer
    std::string m_plan;
    StepTimers m_timers;

    // Sizes.
    std::int64_t m_rowCapacity = 0;
    std::int32_t m_sequenceCapacity = 0;
    std::int64_t m_hidden = 0, m_qRow = 0, m_kvDim = 0, m_attnDim = 0;
    std::int64_t m_convDim = 0, m_valueDim = 0;
    cuda::AttentionShape m_attentionShape;
    cuda::DeltaNetShape m_deltaShape;

    // Activations and scratch.
    float *m_hiddenRows = nullptr, *m_normedRows = nullptr, *m_deltaRows = nullptr;
    float* m_temp = nullptr; // per-layer temporaries (attention, DeltaNet and MoE reuse it)
    std::size_t m_tempFloats = 0;
    float *m_logitInput = nullptr, *m_logits = nullptr;
    int* m_nonFinite = nullptr;
    // Argmax of each logit row, [m_greedyRows]: a step's rows (an all-logits prefill has one
    // per token), not only a graph's batch.
    std::int32_t* m_greedy = nullptr;
    float* m_greedyValue = nullptr;
    std::int64_t m_greedyRows = 0;
    void* m_argmaxWorkspace = nullptr; // argmaxRows' counters, zero between calls
    unsigned* m_routerBlocksDone = nullptr; // routerLogitsTopK's counter, zero between calls
    cuda::Int8Rows m_normedQuant; // the normed rows quantized, for steps of <= kMatVecMaxTokens
    cuda::Int8Rows m_normedTwoPlanes; // the same rows in two planes, for the routed experts
    int m_twoPlanesLayer = -1; // the MoE layer whose norm writes m_normedTwoPlanes (recording)
    cuda::DeviceScratch m_scratch;
    std::size_t m_scratchBytes = 0; // the products' scratch for the largest step
    float* m_logitsHost = nullptr; // pinned [m_logitPass][vocab]
    // Logit rows computed (and staged to the host) at a time: as many as the output head's
    // integer products take in one launch, so a 32-sequence step reads the head once.
    std::int64_t m_logitPass = cuda::kMatVecMaxTokens;
    // Logit rows of the last finished step still in m_logits (0 once a step begins, after a
    // failed step, or when the step had more rows than one pass: its first passes are gone).
    std::int64_t m_keptRows = 0;
    StepLayoutBuffer m_layoutBuffer;

    // The step in flight.
    const BackendStep* m_step = nullptr;
    cuda::StepLayout m_layout;
    std::vector<Op> m_ops;
    cudaError_t m_error = cudaSuccess;
    std::source_location m_errorWhere;
    bool m_decode = false;
    // The MoE layer whose shared expert's gated output the next norm adds (-1: none): the
    // gate's dot product and the add ride in that norm's kernel instead of one of their own.
    int m_sharedAddendLayer = -1;
    cuda::GatedAddend sharedAddend(int layer) const;
    // The MoE block's per-step temporaries, laid out in m_temp.
    struct MoeTemporaries {
        float* logits;
        float* weights;
        std::int32_t* ids;
        float* sharedGate;
        float* sharedUp;
        float* sharedDown;
    };
    MoeTemporaries moeTemporaries() const;
    std::map<int, cudaGraphExec_t> m_graphs;
    std::set<int> m_warmed, m_noGraph;
};

Result<void> CudaBackend::checkDevice()
{
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        cudaGetLastError();
        // The runtime says "driver version is insufficient" also where there is no driver.
        const auto failure = classifyCudaStartFailure(
            e == cudaErrorInsufficientDriver, e == cudaErrorNoDevice, nvidiaDriverLoaded());
        return makeError(cudaStartErrorMessage(failure, CUDART_VERSION, cudaGetErrorString(e)));
    }
    if (m_options.device < 0 || m_options.device >= count)
        return makeError("cuda:" + std::to_string(m_options.device)
            + " does not exist: this machine has " + std::to_string(count)
            + " CUDA device(s) (clausewright-cli devices lists them); use one of "
            + "those or --device cpu");
    int driver = 0;
    cudaDriverGetVersion(&driver);
    if (driver < CUDART_VERSION)
        return makeError("the NVIDIA driver supports CUDA " + std::to_string(driver / 1000) + "."
            + std::to_string(driver % 1000 / 10) + " but this build needs CUDA "
            + std::to_string(CUDART_VERSION / 1000) + "."
            + std::to_string(CUDART_VERSION % 1000 / 10)
            + ": update the driver, or use --device cpu");
    if (auto r = cudaSetDevice(m_options.device); r != cudaSuccess)
        return cudaFailure("selecting cuda:" + std::to_string(m_options.device), r);
    if (auto r = cudaGetDeviceProperties(&m_prop, m_options.device); r != cudaSuccess)
        return cudaFailure("reading the GPU's properties", r);
    if (m_prop.major < 8)
        return makeError(std::string(m_prop.name) + " has compute capability "
            + std::to_string(m_prop.major) + "." + std::to_string(m_prop.minor)
            + "; the CUDA backend needs 8.0 or newer (A100, RTX 30xx and later). Use --device cpu");
    return {};
}

void CudaBackend::check(cudaError_t error, std::source_location where)
{
    if (error != cudaSuccess && m_error == cudaSuccess) {
        m_error = error;
        m_errorWhere = where;
    }
}

Result<void> CudaBackend::initialise()
{
    if (auto ok = checkDevice(); !ok)
        return ok;
    const auto& hp = m_description.hparams;
    const auto& cap = m_options.capacity;
    std::size_t freeBefore = 0, total = 0;
    if (auto e = cudaMemGetInfo(&freeBefore, &total); e != cudaSuccess)
        return cudaFailure("reading the GPU's free memory", e);
    if (auto e = cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking); e != cudaSuccess)
        return cudaFailure("creating a CUDA stream", e);
    if (cublasCreate(&m_cublas) != CUBLAS_STATUS_SUCCESS)
        return makeError(
            "cuBLAS could not start on " + std::string(m_prop.name) + "; use --device cpu");
    cublasSetStream(m_cublas, m_stream);
    std::size_t freeAfter = 0;
    cudaMemGetInfo(&freeAfter, &total);
    m_contextBytes = freeBefore > freeAfter ? freeBefore - freeAfter : 0;

    // Shapes.
    m_hidden = hp.hiddenSize;
    m_attnDim = hp.numHeads * hp.headDim;
    m_qRow = hp.attentionOutputGate ? 2 * m_attnDim : m_attnDim;
    m_kvDim = hp.numKvHeads * hp.headDim;
    m_attentionShape.heads = std::int32_t(hp.numHeads);
    m_attentionShape.kvHeads = std::int32_t(hp.numKvHeads);
    m_attentionShape.headDim = std::int32_t(hp.headDim);
    m_attentionShape.ropeDim = std::int32_t(hp.ropeDim);
    m_attentionShape.gated = hp.attentionOutputGate;
    m_attentionShape.eps = float(hp.rmsNormEps);
    // CW_CUDA_EXACT_ATTENTION=1 keeps f32 attention under the faster precisions (diagnosis).
    const char* exact = std::getenv("CW_CUDA_EXACT_ATTENTION");
    m_attentionShape.exactPrefill
        = m_precision == cuda::GemmPrecision::Float32 || (exact && std::strcmp(exact, "1") == 0);
    m_deltaShape.keyHeads = std::int32_t(hp.linearNumKeyHeads);
    m_deltaShape.valueHeads = std::int32_t(hp.linearNumValueHeads);
    m_deltaShape.keyDim = std::int32_t(hp.linearKeyHeadDim);
    m_deltaShape.valueDim = std::int32_t(hp.linearValueHeadDim);
    m_deltaShape.convKernel = std::int32_t(hp.linearConvKernel);
    m_deltaShape.valueHeadsTiled = m_description.conventions.deltaNetValueHeadsTiled;
    m_deltaShape.eps = float(hp.rmsNormEps);
    m_convDim = m_deltaShape.convDim();
    m_valueDim = hp.linearNumValueHeads * hp.linearValueHeadDim;
    m_rowCapacity = std::max<std::int64_t>(cap.maxStepRows, cap.maxSequences);
    m_sequenceCapacity = std::max(cap.maxSequences, 1);
    m_logitPass = cuda::kMatVecMaxTokens;
    if (m_hostWeights.output.valid()) {
        cuda::DeviceMatrix head; // its shape only: no device copy exists yet
        head.type = m_hostWeights.output.type;
        head.data = reinterpret_cast<const void*>(std::uintptr_t(1) << 12);
        head.rowStride = m_hostWeights.output.rowStride;
        head.rows = m_hostWeights.output.rows;
        head.cols = m_hostWeights.output.cols;
        m_logitPass = std::max(m_logitPass,
            std::min<std::int64_t>(cuda::integerProductMaxTokens(head, m_precision),
                std::max<std::int64_t>(m_sequenceCapacity, cuda::kMatVecMaxTokens)));
    }

    const int attentionLayers = m_hostWeights.layersOf(LayerKind::FullAttention);
    const int deltaLayers = m_hostWeights.layersOf(LayerKind::GatedDeltaNet);
    // Shapes the kernels do not take are refused here, by name, rather than failing the first
    // step (transformers accepts any head size; every published Qwen3 model uses 64-256).
    if (attentionLayers > 0 && !cuda::pagedAttentionTakesHeadDim(hp.headDim))
        return makeError("this model's attention heads have " + std::to_string(hp.headDim)
            + " values; the CUDA backend takes multiples of 16 up to 256. Use --device cpu");
    if (hp.numExperts > 0 && (m_hidden % 8 != 0 || hp.expertFfnSize % 8 != 0))
        return makeError("this model's hidden size (" + std::to_string(m_hidden)
            + ") or expert size (" + std::to_string(hp.expertFfnSize)
            + ") is not a multiple of 8, which the CUDA backend's expert kernels need. Use "
              "--device cpu");
    const std::int64_t sh = hp.sharedExpertFfnSize;
    const std::int64_t E = hp.numExperts, K = hp.numExpertsPerToken;
    const std::size_t attentionTemp = std::size_t(m_qRow + 2 * m_kvDim + 2 * m_attnDim);
    const std::size_t deltaTemp
        = deltaLayers ? std::size_t(m_convDim + 2 * m_valueDim + 2 * hp.linearNumValueHeads) : 0;
    const std::size_t moeTemp = std::size_t(E + 2 * K + 2 * sh + m_hidden);
    m_tempFloats = std::max({ attentionTemp, deltaTemp, moeTemp }) * std::size_t(m_rowCapacity)
        + kTempSlices * std::size_t(kTempAlignFloats);

    // The plan, checked against the card before anything large is allocated.
    const std::uint64_t weightBytes = deviceWeightBytes(m_hostWeights);
    const std::size_t blockFloats
        = std::size_t(attentionLayers) * 2 * std::size_t(cap.kvBlockTokens) * std::size_t(m_kvDim);
    const std::uint64_t kvBytes
        = attentionLayers ? std::uint64_t(cap.kvBlocks) * blockFloats * 4 : 0;
    m_convFloats = cuda::deltaNetConvStateFloats(m_deltaShape);
    m_recurrentFloats
        = std::size_t(hp.linearNumValueHeads * hp.linearKeyHeadDim * hp.linearValueHeadDim);
    // The decode counters (one int per slot and value head) are shared by the layers.
    const std::size_t deltaCounterBytes = deltaLayers
        ? std::size_t(m_sequenceCapacity) * std::size_t(hp.linearNumValueHeads) * 4
        : 0;
    const std::uint64_t stateBytes = std::uint64_t(deltaLayers) * std::uint64_t(m_sequenceCapacity)
            * (m_convFloats + m_recurrentFloats) * 4
        + deltaCounterBytes;
    m_scratchBytes = scratchBytes(m_rowCapacity);
    const std::size_t scratch = m_scratchBytes + kCublasWorkspace;
    const std::uint64_t activations = std::uint64_t(m_rowCapacity) * 3 * std::uint64_t(m_hidden) * 4
        + m_tempFloats * 4
        + std::uint64_t(m_logitPass) * std::uint64_t(hp.vocabSize + m_hidden) * 4;
    const std::uint64_t workspace = scratch + activations;
    const std::uint64_t need = weightBytes + kvBytes + stateBytes + workspace;
    const std::uint64_t margin = 256ull << 20;
    // What the backend may take: the budget asked for, never more than is free.
    const bool budgeted = m_options.memoryBudgetBytes > 0;
    const std::uint64_t room = budgeted
        ? std::min<std::uint64_t>(m_options.memoryBudgetBytes, freeAfter)
        : std::uint64_t(freeAfter);
    const std::string roomText = budgeted && room < freeAfter
        ? "the budget of " + gib(room) + " (--gpu-memory)"
        : gib(freeAfter) + " free";
    std::string parts = "weights " + gib(weightBytes) + ", KV cache " + gib(kvBytes) + " ("
        + std::to_string(cap.kvBlocks * cap.kvBlockTokens) + " tokens), recurrent states "
        + gib(stateBytes) + " (" + std::to_string(m_sequenceCapacity) + " sequences), workspace "
        + gib(workspace) + " (steps of up to " + std::to_string(m_rowCapacity) + " tokens)";
    // Over the room: the routed experts that do not fit stay in host memory, the most chosen
    // in a GPU cache of what is left after everything else (expert_cache.h).
    ExpertPlacement placement;
    bool staging = false;
    std::uint64_t planned = need;
    if (need + margin > room) {
        const auto perLayer = routedExpertBytesPerLayer(m_hostWeights);
        std::uint64_t expertBytes = 0;
        for (const auto b : perLayer)
            expertBytes += b * std::uint64_t(E);
        const std::uint64_t rest = need - std::min(need, expertBytes);
        const std::uint64_t fixed = rest + ExpertCache::overheadBytes(m_hostWeights);
        if (expertBytes == 0 || fixed + margin > room)
            return makeError("the model needs " + gib(need) + " on " + std::string(m_prop.name)
                + " (" + parts + ")"
                + (expertBytes ? ", " + gib(fixed) + " even with its routed experts in host memory,"
                               : "")
                + " but has " + roomText
                + ": use a shorter --context, fewer parallel sequences, a smaller "
                  "quantization, or --device cpu");
        ExpertPlacementRequest request;
        request.experts = int(E);
        request.expertBytes = perLayer;
        request.counts = readExpertCounts(
            m_options.expertCountsPath, int(m_hostWeights.layers.size()), int(E));
        const std::uint64_t forExperts = room - margin - fixed;
        // Prefill's two staging buffers each hold one layer's uncached experts, so they shrink
        // as the cache grows: placed with room for the widest layer whole, then again with the
        // room the last placement's uncached experts need, until that stops shrinking. Every
        // placement fits the buffers planned before it, and the cache's refreshes swap experts
        // within a layer, never changing how many it keeps.
        request.budgetBytes = 0;
        std::uint64_t buffer = ExpertCache::stagingBytes(m_hostWeights, placeExperts(request));
        staging = 2 * buffer <= forExperts;
        request.budgetBytes = staging ? forExperts - 2 * buffer : forExperts;
        placement = placeExperts(request);
        for (int round = 0; staging && round < 8; ++round) {
            const std::uint64_t needed = ExpertCache::stagingBytes(m_hostWeights, placement);
            if (needed >= buffer)
                break;
            buffer = needed;
            request.budgetBytes = forExperts - 2 * buffer;
            placement = placeExperts(request);
        }
        planned = fixed + placement.gpuBytes
            + (staging ? 2 * ExpertCache::stagingBytes(m_hostWeights, placement) : 0);
        parts = "weights " + gib(weightBytes - expertBytes + placement.gpuBytes)
            + " (with the cached experts), KV cache " + gib(kvBytes) + " ("
            + std::to_string(cap.kvBlocks * cap.kvBlockTokens) + " tokens), recurrent states "
            + gib(stateBytes) + " (" + std::to_string(m_sequenceCapacity)
            + " sequences), workspace " + gib(workspace) + " (steps of up to "
            + std::to_string(m_rowCapacity) + " tokens)";
    }
    m_plan = "GPU memory plan on " + deviceName() + ": " + parts + "; total " + gib(planned)
        + " of " + (budgeted && room < freeAfter ? "a budget of " + gib(room) : gib(total)) + ", "
        + gib(room - std::min(room, planned)) + " left";

    std::vector<bool> expertsElsewhere(m_hostWeights.layers.size(), false);
    for (std::size_t l = 0; l < placement.onGpu.size(); ++l) {
        const auto& on = placement.onGpu[l];
        expertsElsewhere[l]
            = !on.empty() && std::count(on.begin(), on.end(), true) < std::ptrdiff_t(on.size());
    }
    auto weights = uploadWeights(m_hostWeights, m_arena, expertsElsewhere);
    if (!weights)
        return weights.error();
    m_w = std::move(*weights);
    if (placement.offloads()) {
        ExpertCache::HostCompute host;
        host.hp = &m_description.hparams;
        host.integerProducts = m_precision != cuda::GemmPrecision::Float32;
        host.threads = m_options.hostThreads;
        auto cache = ExpertCache::create(m_hostWeights, placement, int(K), staging, m_arena,
            m_stream, m_options.expertCountsPath, &host);
        if (!cache)
            return cache.error();
        m_expertCache = std::move(*cache);
        for (std::size_t l = 0; l < m_w.layers.size(); ++l)
            if (m_expertCache->offloaded(int(l))) {
                const auto& live = m_expertCache->live(int(l));
                m_w.layers[l].gate = live.gate;
                m_w.layers[l].up = live.up;
                m_w.layers[l].down = live.down;
            }
        m_plan += "; " + m_expertCache->describe();
        if (cudaStreamCreateWithFlags(&m_hostStream, cudaStreamNonBlocking) != cudaSuccess
            || cudaEventCreateWithFlags(&m_hostFork, cudaEventDisableTiming) != cudaSuccess
            || cudaEventCreateWithFlags(&m_hostJoin, cudaEventDisableTiming) != cudaSuccess
            || cudaEventCreate(&m_viewStart) != cudaSuccess
            || cudaEventCreate(&m_viewStop) != cudaSuccess)
            return makeError("could not create the host experts' stream; use --device cpu");
    }

    if (attentionLayers) {
        auto kv = m_arena.allocate(kvBytes, "the KV cache");
        if (!kv)
            return kv.error();
        m_pagedKv.base = static_cast<float*>(*kv);
        m_pagedKv.layers = attentionLayers;
        m_pagedKv.blockTokens = cap.kvBlockTokens;
        m_pagedKv.kvWidth = std::int32_t(m_kvDim);
    }
    m_kv = std::make_unique<CudaKvStore>(m_pagedKv, cap.kvBlocks, m_options.device, m_stream);
    int* deltaCounters = nullptr;
    if (deltaLayers) {
        auto counters = m_arena.allocate(deltaCounterBytes, "DeltaNet decode counters");
        if (!counters)
            return counters.error();
        deltaCounters = static_cast<int*>(*counters);
        // The kernels keep them 0.
        check(cudaMemsetAsync(deltaCounters, 0, deltaCounterBytes, m_stream));
    }
    for (int l = 0; l < deltaLayers; ++l) {
        auto conv
            = m_arena.allocate(std::size_t(m_sequenceCapacity) * m_convFloats * 4, "conv states");
        auto rec = m_arena.allocate(
            std::size_t(m_sequenceCapacity) * m_recurrentFloats * 4, "recurrent states");
        if (!conv)
            return conv.error();
        if (!rec)
            return rec.error();
        m_states.push_back(
            { static_cast<float*>(*conv), static_cast<float*>(*rec), deltaCounters });
    }
    m_stateUsed.assign(std::size_t(deltaLayers ? m_sequenceCapacity : 0), false);
    if (auto r = allocateBuffers(); !r)
        return r;
    // A first launch proves the build has kernels for this GPU.
    if (auto e = cuda::rmsNormRows(
            m_hiddenRows, m_hidden, nullptr, 1, m_hidden, 1e-6f, m_normedRows, m_hidden, m_stream);
        e != cudaSuccess)
        return makeError(std::string("this build has no CUDA kernels for ") + m_prop.name
            + " (compute capability " + std::to_string(m_prop.major) + "."
            + std::to_string(m_prop.minor) + "): " + cudaGetErrorString(e)
            + ". Rebuild with CMAKE_CUDA_ARCHITECTURES including " + std::to_string(m_prop.major)
            + std::to_string(m_prop.minor) + ", or use --device cpu");
    if (auto e = cudaStreamSynchronize(m_stream); e != cudaSuccess)
        return cudaFailure("starting the GPU", e);
    return {};
}

std::size_t CudaBackend::scratchBytes(std::int64_t rows) const
{
    std::size_t bytes = 0;
    auto need = [&](std::size_t b) { bytes = std::max(bytes, b); };
    const std::int64_t logitRows = m_logitPass;
    const auto& hp = m_description.hparams;
    cuda::StepLayout capacity;
    capacity.rows = std::int32_t(rows);
    capacity.sequences = m_sequenceCapacity;
    capacity.maxTokensPerSequence = std::int32_t(rows);
    capacity.maxContext = std::int32_t(m_options.capacity.contextLength);
    if (m_hostWeights.layersOf(LayerKind::FullAttention) > 0)
        need(cuda::pagedAttentionScratchBytes(m_attentionShape, capacity));
    if (m_hostWeights.layersOf(LayerKind::GatedDeltaNet) > 0)
        need(cuda::deltaNetScratchBytes(m_deltaShape, capacity));
    // Matrix scratch depends on shapes only; the device copies do not exist yet, so the host
    // weights' shapes stand in, with a placeholder address aligned as every cudaMalloc is (a
    // null one reads as "no matrix" and sized no scratch: on the H200 the prefill products of
    // a model whose other ops needed none then failed with cudaErrorInvalidValue).
    const void* const kShapeOnly = reinterpret_cast<const void*>(std::uintptr_t(1) << 12);
    auto dense = [&](const WeightMatrix& w, std::int64_t tokens) {
        if (!w.valid())
            return;
        cuda::DeviceMatrix d;
        d.type = w.type;
        d.data = kShapeOnly;
        d.rowStride = w.rowStride;
        d.rows = w.rows;
        d.cols = w.cols;
        need(cuda::linearScratchBytes(d, tokens, m_precision));
    };
    dense(m_hostWeights.output, logitRows);
    for (const auto& L : m_hostWeights.layers) {
        for (const WeightMatrix* w :
            { &L.attention.q, &L.attention.k, &L.attention.v, &L.attention.o, &L.deltaNet.qkv,
                &L.deltaNet.z, &L.deltaNet.beta, &L.deltaNet.alpha, &L.deltaNet.out, &L.moe.router,
                &L.moe.sharedGateProj, &L.moe.sharedUp, &L.moe.sharedDown })
            dense(*w, rows);
        cuda::DeviceExpertStack gate, down;
        gate.data = kShapeOnly;
        down.data = kShapeOnly;
        gate.type = L.moe.gate.view->type;
        gate.rows = L.moe.gate.rows;
        gate.cols = L.moe.gate.cols;
        gate.experts = hp.numExperts;
        down.type = L.moe.down.view->type;
        down.rows = L.moe.down.rows;
        down.cols = L.moe.down.cols;
        down.experts = hp.numExperts;
        need(cuda::routedExpertsScratchBytes(
            rows, int(hp.numExpertsPerToken), gate, down, m_precision));
    }
    return bytes;
}

Result<void> CudaBackend::allocateBuffers()
{
    const auto& hp = m_description.hparams;
    auto floats = [&](std::size_t n, const char* what) -> Result<float*> {
        auto p = m_arena.allocate(n * sizeof(float), what);
        if (!p)
            return p.error();
        return static_cast<float*>(*p);
    };
    const std::size_t rowValues = std::size_t(m_rowCapacity * m_hidden);
    auto hidden = floats(rowValues, "the hidden state");
    auto normed = floats(rowValues, "the normed rows");
    auto delta = floats(rowValues, "the block outputs");
    auto temp = floats(m_tempFloats, "the layer temporaries");
    auto logitInput = floats(std::size_t(m_logitPass * m_hidden), "the output rows");
    auto logits = floats(std::size_t(m_logitPass * hp.vocabSize), "the logits");
    for (auto* r : { &hidden, &normed, &delta, &temp, &logitInput, &logits })
        if (!*r)
            return r->error();
    m_hiddenRows = *hidden;
    m_normedRows = *normed;
    m_deltaRows = *delta;
    m_temp = *temp;
    m_logitInput = *logitInput;
    m_logits = *logits;
    if (cuda::addRmsNormQuantizes(m_hidden)) {
        const std::size_t values = std::size_t(cuda::kMatVecMaxTokens * m_hidden);
        auto q = m_arena.allocate(values + values / 32 * sizeof(float4), "the quantized rows");
        if (!q)
            return q.error();
        m_normedQuant.q = static_cast<std::int8_t*>(*q);
        m_normedQuant.s = reinterpret_cast<float4*>(m_normedQuant.q + values);
        if (hp.numExperts > 0) {
            const std::size_t bytes = cuda::expertInputRowsBytes(cuda::kMatVecMaxTokens, m_hidden);
            auto two = m_arena.allocate(bytes, "the experts' quantized rows");
            if (!two)
                return two.error();
            m_normedTwoPlanes = cuda::expertInputRowsAt(
                static_cast<std::byte*>(*two), cuda::kMatVecMaxTokens, m_hidden);
        }
    }
    if (hp.sharedExpertFfnSize > 0) {
        // Scratch for the shared expert's quantized rows on the side stream (its only use).
        std::size_t sideBytes = 0;
        for (const auto& L : m_w.layers)
            if (L.sharedGate)
                sideBytes = std::max({ sideBytes,
                    cuda::linearScratchBytes(L.sharedGateProj, cuda::kMatVecMaxTokens, m_precision),
                    cuda::linearScratchBytes(L.sharedUp, cuda::kMatVecMaxTokens, m_precision),
                    cuda::linearScratchBytes(L.sharedDown, cuda::kMatVecMaxTokens, m_precision) });
        auto side = m_arena.allocate(sideBytes, "the shared expert's scratch");
        if (!side)
            return side.error();
        m_sideScratch = { static_cast<std::byte*>(*side), sideBytes };
        if (cudaStreamCreateWithFlags(&m_sideStream, cudaStreamNonBlocking) != cudaSuccess
            || cudaEventCreateWithFlags(&m_fork, cudaEventDisableTiming) != cudaSuccess
            || cudaEventCreateWithFlags(&m_join, cudaEventDisableTiming) != cudaSuccess)
            return makeError("could not create the GPU's second stream; use --device cpu");
    }
    auto counter = m_arena.allocate(sizeof(int), "the finite check");
    if (!counter)
        return counter.error();
    m_nonFinite = static_cast<int*>(*counter);
    m_greedyRows = std::max<std::int64_t>(m_rowCapacity, kMaxGraphBatch);
    auto greedy = m_arena.allocate(std::size_t(m_greedyRows) * 8, "the greedy tokens");
    if (!greedy)
        return greedy.error();
    m_greedy = static_cast<std::int32_t*>(*greedy);
    m_greedyValue = reinterpret_cast<float*>(m_greedy + m_greedyRows);
    const std::size_t argmaxBytes = cuda::argmaxWorkspaceBytes(m_logitPass, hp.vocabSize);
    auto argmax = m_arena.allocate(argmaxBytes, "the greedy search");
    if (!argmax)
        return argmax.error();
    m_argmaxWorkspace = *argmax;
    if (auto e = cudaMemset(m_argmaxWorkspace, 0, argmaxBytes); e != cudaSuccess)
        return cudaFailure("clearing the greedy search's counters", e);
    auto routerCounter = m_arena.allocate(sizeof(unsigned), "the router's counter");
    if (!routerCounter)
        return routerCounter.error();
    m_routerBlocksDone = static_cast<unsigned*>(*routerCounter);
    if (auto e = cudaMemset(m_routerBlocksDone, 0, sizeof(unsigned)); e != cudaSuccess)
        return cudaFailure("clearing the router's counter", e);
    const std::size_t scratch = m_scratchBytes; // sized with the memory plan
    auto s = m_arena.allocate(scratch + kCublasWorkspace, "the products' scratch");
    if (!s)
        return s.error();
    m_scratch.data = static_cast<std::byte*>(*s);
    m_scratch.bytes = scratch;
    cublasSetWorkspace(m_cublas, m_scratch.data + scratch, kCublasWorkspace);
    if (auto e = cudaMallocHost(reinterpret_cast<void**>(&m_logitsHost),
            std::size_t(m_logitPass * (hp.vocabSize + 1)) * sizeof(float) + sizeof(int));
        e != cudaSuccess)
        return cudaFailure("pinned host memory for the logits", e);
    const std::int32_t blocksPerSequence
        = std::int32_t((m_options.capacity.contextLength + m_options.capacity.kvBlockTokens - 1)
            / m_options.capacity.kvBlockTokens);
    return m_layoutBuffer.allocate(std::max<std::int64_t>(m_rowCapacity, kMaxGraphBatch),
        std::max(m_sequenceCapacity, kMaxGraphBatch), blocksPerSequence, m_arena);
}

Result<int> CudaBackend::newState()
{
    cudaSetDevice(m_options.device);
    for (std::size_t i = 0; i < m_stateUsed.size(); ++i) {
        if (m_stateUsed[i])
            continue;
        for (const auto& s : m_states) {
            check(cudaMemsetAsync(s.conv + i * m_convFloats, 0, m_convFloats * 4, m_stream));
            check(cudaMemsetAsync(
                s.recurrent + i * m_recurrentFloats, 0, m_recurrentFloats * 4, m_stream));
        }
        m_stateUsed[i] = true;
        return int(i);
    }
    return makeError("all " + std::to_string(m_stateUsed.size())
        + " recurrent-state slots of the GPU are taken (ModelOptions::maxSequences); finish a "
          "sequence first or load the model with more");
}

Result<int> CudaBackend::copyState(int from)
{
    auto slot = newState();
    if (!slot)
        return slot;
    const std::size_t to = std::size_t(*slot), src = std::size_t(from);
    for (const auto& s : m_states) {
        check(cudaMemcpyAsync(s.conv + to * m_convFloats, s.conv + src * m_convFloats,
            m_convFloats * 4, cudaMemcpyDeviceToDevice, m_stream));
        check(cudaMemcpyAsync(s.recurrent + to * m_recurrentFloats,
            s.recurrent + src * m_recurrentFloats, m_recurrentFloats * 4, cudaMemcpyDeviceToDevice,
            m_stream));
    }
    return slot;
}

Result<void> CudaBackend::beginStep(const BackendStep& step)
{
    m_keptRows = 0;
    const std::int64_t T = std::int64_t(step.tokens.size());
    const std::int64_t S = std::int64_t(step.sequences.size());
    if (T > m_rowCapacity || S > std::max<std::int64_t>(m_sequenceCapacity, kMaxGraphBatch))
        return makeError("a step of " + std::to_string(T) + " tokens over " + std::to_string(S)
            + " sequences is more than the GPU backend was sized for ("
            + std::to_string(m_rowCapacity) + " tokens, " + std::to_string(m_sequenceCapacity)
            + " sequences)");
    for (const auto& s : step.sequences)
        if (s.pos0 + s.n > m_options.capacity.contextLength)
            return makeError("a sequence would pass the GPU's context of "
                + std::to_string(m_options.capacity.contextLength) + " tokens");
    // The current device is per host thread, and steps may run on another thread than the
    // one that loaded the model (the app's engine worker).
    if (auto e = cudaSetDevice(m_options.device); e != cudaSuccess)
        return cudaFailure("selecting cuda:" + std::to_string(m_options.device), e);
    m_step = &step;
    m_ops.clear();
    m_error = cudaSuccess;
    m_decode = S <= kMaxGraphBatch && T == S;
    if (m_expertCache) {
        // A new request (a sequence at its first token) is where the cache may change: its
        // experts move between steps, never inside one.
        bool fresh = false;
        for (const auto& s : step.sequences)
            fresh = fresh || s.pos0 == 0;
        if (fresh && m_stepsSinceRefresh >= kRefreshSteps) {
            auto moved = m_expertCache->refresh(m_stream);
            if (!moved)
                return moved.error();
            if (!moved->empty())
                m_viewTrial.reset();
            m_stepsSinceRefresh = 0;
        }
        ++m_stepsSinceRefresh;
        m_expertCache->beginStep();
        // Per layer, what the cost model says is faster: decode steps read host experts in
        // place or have the CPU take part of them (host views); other steps read them in place
        // or staged.
        m_stagedLayers.assign(m_w.layers.size(), false);
        m_hostLayers.assign(m_w.layers.size(), false);
        bool host = false;
        for (std::size_t l = 0; l < m_w.layers.size(); ++l) {
            if (m_decode)
                host = (m_hostLayers[l] = m_expertCache->prefersHost(int(l), T)) || host;
            else
                m_stagedLayers[l] = m_expertCache->prefersStaging(int(l), T);
        }
        // The host views and none, timed (decode_view_trial.h); a view that
        // CW_CUDA_EXPERTS forces is not second-guessed.
        const bool trial = host && !m_expertCache->viewForced();
        m_viewTimed = trial && m_viewTrial.deciding(int(T));
        m_stepView = !host ? DecodeViewTrial::InPlace
            : trial        ? m_viewTrial.view(int(T))
                           : DecodeViewTrial::Split;
        if (m_stepView == DecodeViewTrial::InPlace) {
            m_hostLayers.assign(m_w.layers.size(), false);
            host = false;
        }
        // The share is read on the device when the step runs: the graphs stay as captured.
        if (host) {
            check(m_expertCache->usePlan(m_stepView == DecodeViewTrial::AllOnCpu
                    ? ExpertCache::SplitPlan::AllOnCpu
                    : m_stepView == DecodeViewTrial::HalfRateSplit
                    ? ExpertCache::SplitPlan::HalfRate
                    : ExpertCache::SplitPlan::Measured,
                m_stream));
            m_expertCache->wakeHostExperts();
        }
    }
    m_layout = m_layoutBuffer.pack(step, std::int32_t(m_options.capacity.contextLength), m_decode);
    ++m_timers.steps;
    return {};
}

void CudaBackend::linear(const cuda::DeviceMatrix& w, const float* x, std::int64_t xStride,
    std::int64_t rows, float* y, std::int64_t yStride)
{
    check(
        cuda::linear(w, x, xStride, rows, y, yStride, m_precision, m_scratch, m_cublas, m_stream));
}

void CudaBackend::linearFanOut(std::initializer_list<cuda::LinearOutput> outputs)
{
    linearFanOut(outputs, m_stream, m_scratch);
}

void CudaBackend::linearFanOut(std::initializer_list<cuda::LinearOutput> outputs,
    cudaStream_t stream, cuda::DeviceScratch scratch)
{
    check(cuda::linearFanOut(outputs.begin(), int(outputs.size()), m_normedRows, m_hidden,
        m_layout.rows, normedRowsQuantized() ? &m_normedQuant : nullptr, m_precision, scratch,
        m_cublas, stream));
}

void CudaBackend::embed()
{
    m_ops.push_back([this] {
        // The first staged layer's copy starts with the step.
        for (std::size_t l = 0; l < m_stagedLayers.size(); ++l)
            if (m_stagedLayers[l]) {
                check(m_expertCache->prefetch(int(l)));
                break;
            }
        check(cuda::gatherRows(
            m_w.embedding, m_layout.tokens, m_layout.rows, m_hiddenRows, m_stream));
    });
}

void CudaBackend::norm(NormSite site, bool addResidual)
{
    if (g_skip.norm && site.kind != NormSite::Kind::Output)
        return;
    const float* w = m_w.outputNorm;
    if (site.kind == NormSite::Kind::LayerInput)
        w = m_w.layers[std::size_t(site.layer)].inputNorm;
    else if (site.kind == NormSite::Kind::PostAttention)
        w = m_w.layers[std::size_t(site.layer)].postAttentionNorm;
    // Only a norm that adds the residual may take the MoE's shared expert (moe() made sure).
    const int addendLayer = addResidual ? std::exchange(m_sharedAddendLayer, -1) : -1;
    // The norm before an MoE block also writes its rows in the experts' two planes.
    const bool twoPlanes = site.kind == NormSite::Kind::PostAttention && m_normedTwoPlanes.q
        && m_w.layers[std::size_t(site.layer)].router.data;
    m_twoPlanesLayer = twoPlanes ? site.layer : -1;
    m_ops.push_back([this, w, addResidual, addendLayer, twoPlanes] {
        const float eps = float(m_description.hparams.rmsNormEps);
        float* delta = addResidual ? m_deltaRows : nullptr;
        const cuda::GatedAddend addend
            = addendLayer >= 0 ? sharedAddend(addendLayer) : cuda::GatedAddend {};
        if (normedRowsQuantized())
            check(cuda::addRmsNormRowsQuantized(m_hiddenRows, delta, w, m_layout.rows, m_hidden,
                eps, m_normedRows, m_normedQuant, m_stream, addend,
                twoPlanes ? m_normedTwoPlanes : cuda::Int8Rows {}));
        else
            check(cuda::addRmsNormRows(m_hiddenRows, delta, w, m_layout.rows, m_hidden, eps,
                m_normedRows, m_stream, addend));
    });
}

void CudaBackend::attention(int layer)
{
    if (g_skip.attention)
        return;
    m_ops.push_back([this, layer] {
        const auto& L = m_w.layers[std::size_t(layer)];
        const int cacheLayer = m_hostWeights.layers[std::size_t(layer)].cacheIndex;
        const std::int64_t T = m_layout.rows;
        TempSlices slices(m_temp);
        float* qAll = slices.take(T * m_qRow);
        float* k = slices.take(T * m_kvDim);
        float* v = slices.take(T * m_kvDim);
        float* q = slices.take(T * m_attnDim);
        float* attn = slices.take(T * m_attnDim);
        linearFanOut({ { &L.q, qAll, m_qRow }, { &L.k, k, m_kvDim }, { &L.v, v, m_kvDim } });
        check(cuda::attentionPrepare(qAll, m_qRow, k, v, L.qNorm, L.kNorm, m_w.ropeInvFreq,
            m_attentionShape, m_layout, m_pagedKv, cacheLayer, q, m_stream));
        const float scale = 1.0f / std::sqrt(float(m_attentionShape.headDim));
        check(cuda::pagedAttention(q,
            m_attentionShape.gated ? qAll + m_attentionShape.headDim : nullptr, m_qRow,
            m_attentionShape, scale, m_layout, m_pagedKv, cacheLayer, attn, m_scratch, m_stream));
        linear(L.o, attn, m_attnDim, T, m_deltaRows, m_hidden);
    });
}

void CudaBackend::deltaNet(int layer)
{
    if (g_skip.deltaNet)
        return;
    m_ops.push_back([this, layer] {
        const auto& L = m_w.layers[std::size_t(layer)];
        const int stateLayer = m_hostWeights.layers[std::size_t(layer)].stateIndex;
        const std::int64_t T = m_layout.rows, nV = m_deltaShape.valueHeads;
        TempSlices slices(m_temp);
        float* qkv = slices.take(T * m_convDim);
        float* z = slices.take(T * m_valueDim);
        float* beta = slices.take(T * nV);
        float* alpha = slices.take(T * nV);
        float* core = slices.take(T * m_valueDim);
        linearFanOut({ { &L.qkv, qkv, m_convDim }, { &L.z, z, m_valueDim }, { &L.beta, beta, nV },
            { &L.alpha, alpha, nV } });
        check(cuda::gatedDeltaNet(qkv, alpha, beta, z, L.conv, L.dtBias, L.negA, L.deltaNorm,
            m_deltaShape, m_layout, m_states[std::size_t(stateLayer)], core, m_scratch, m_stream));
        linear(L.out, core, m_valueDim, T, m_deltaRows, m_hidden);
    });
}

CudaBackend::MoeTemporaries CudaBackend::moeTemporaries() const
{
    const auto& hp = m_description.hparams;
    const std::int64_t T = m_layout.rows, E = hp.numExperts, sh = hp.sharedExpertFfnSize;
    const std::int64_t K = hp.numExpertsPerToken;
    MoeTemporaries t {};
    TempSlices slices(m_temp);
    t.logits = slices.take(T * E);
    t.weights = slices.take(T * K);
    t.ids = reinterpret_cast<std::int32_t*>(slices.take(T * K));
    t.sharedGate = slices.take(T * sh);
    t.sharedUp = slices.take(T * sh);
    t.sharedDown = slices.take(T * m_hidden);
    return t;
}

// Where moe() leaves the shared expert's output, which the next norm still finds there.
cuda::GatedAddend CudaBackend::sharedAddend(int layer) const
{
    return { m_normedRows, m_w.layers[std::size_t(layer)].sharedGate, moeTemporaries().sharedDown };
}

void CudaBackend::moe(int layer)
{
    // The next norm adds the shared expert behind its gate (all that follows an MoE block is
    // the residual norm); diagnosis runs that leave the norms out keep the separate kernel.
    const bool sharedInNorm
        = m_w.layers[std::size_t(layer)].sharedGate && !g_skip.shared && !g_skip.norm;
    m_sharedAddendLayer = sharedInNorm ? layer : -1;
    const bool twoPlanes = std::exchange(m_twoPlanesLayer, -1) == layer;
    m_ops.push_back([this, layer, sharedInNorm, twoPlanes] {
        const auto& hp = m_description.hparams;
        const auto& L = m_w.layers[std::size_t(layer)];
        const std::int64_t T = m_layout.rows, E = hp.numExperts, sh = hp.sharedExpertFfnSize;
        const int K = int(hp.numExpertsPerToken);
        const bool renormalise = hp.architecture == Architecture::Qwen35Moe || hp.normTopkProb;
        const auto [logits, weights, ids, sharedGate, sharedUp, sharedDown] = moeTemporaries();
        // Small steps run the shared expert on a second stream beside the routed experts:
        // both are chains of small kernels, so overlapping them shortens the step (measured on the
        // H200, 2026-12-01: +10 %, PERFORMANCE.md). The row bound is a limit (no cuBLAS there).
        const bool beside = L.sharedGate && m_sideStream && T <= cuda::kMatVecMaxTokens;
        const bool shared = L.sharedGate && !g_skip.shared;
        if (shared) {
            cudaStream_t stream = beside ? m_sideStream : m_stream;
            const cuda::DeviceScratch scratch = beside ? m_sideScratch : m_scratch;
            if (beside) {
                check(cudaEventRecord(m_fork, m_stream));
                check(cudaStreamWaitEvent(m_sideStream, m_fork, 0));
            }
            linearFanOut({ { &L.sharedGateProj, sharedGate, sh }, { &L.sharedUp, sharedUp, sh } },
                stream, scratch);
            check(cuda::siluMul(sharedUp, sharedGate, T * sh, stream));
            check(cuda::linear(L.sharedDown, sharedUp, sh, T, sharedDown, m_hidden, m_precision,
                scratch, m_cublas, stream));
            if (beside)
                check(cudaEventRecord(m_join, m_sideStream));
        }
        if (!g_skip.routed) {
            if (cuda::routerFuses(L.router, T)) {
                check(cuda::routerLogitsTopK(L.router, m_normedRows, m_hidden, T, logits, K,
                    renormalise, ids, weights, m_routerBlocksDone, m_stream));
            } else {
                linear(L.router, m_normedRows, m_hidden, T, logits, E);
                check(cuda::routerTopK(logits, T, E, K, renormalise, ids, weights, m_stream));
            }
            cuda::ExpertDecodeAids aids;
            if (twoPlanes && normedRowsQuantized())
                aids.x2 = m_normedTwoPlanes;
            const cuda::DeviceExpertStack *gate = &L.gate, *up = &L.up, *down = &L.down;
            const bool staged = m_expertCache && m_stagedLayers[std::size_t(layer)];
            const bool onHost = m_expertCache && m_hostLayers[std::size_t(layer)];
            const std::int32_t* routedIds = ids;
            if (m_expertCache) {
                check(m_expertCache->count(layer, ids, T * K, m_stream));
                if (onHost) {
                    // Each token's host choices split between the CPU, beside the GPU, and the
                    // GPU's in-place reads (the GPU reads a zero expert for the CPU's).
                    check(m_expertCache->handOverToHost(
                        layer, int(T), m_normedRows, ids, weights, m_stream));
                    check(cudaEventRecord(m_hostFork, m_stream));
                    check(cudaStreamWaitEvent(m_hostStream, m_hostFork, 0));
                    check(m_expertCache->awaitHost(layer, int(T), m_hostStream));
                    check(cudaEventRecord(m_hostJoin, m_hostStream));
                    const auto& h = m_expertCache->hostView(layer);
                    gate = &h.gate;
                    up = &h.up;
                    down = &h.down;
                    routedIds = m_expertCache->hostGpuIds();
                } else if (staged) {
                    check(m_expertCache->stage(layer, m_stream));
                    const auto& s = m_expertCache->staged(layer);
                    gate = &s.gate;
                    up = &s.up;
                    down = &s.down;
                }
            }
            check(cuda::routedExperts(m_normedRows, T, routedIds, weights, K, *gate, *up, *down,
                m_deltaRows, m_precision, m_scratch, m_cublas, m_stream, aids));
            if (onHost) {
                check(m_expertCache->markGpuDone(layer, m_stream));
                check(cudaStreamWaitEvent(m_stream, m_hostJoin, 0));
                check(cuda::addInPlace(
                    m_deltaRows, m_expertCache->hostSums(), T * m_hidden, m_stream));
            }
            if (staged) {
                check(m_expertCache->release(layer, m_stream));
                // The next staged layer copies while this one runs (into the other buffer; one
                // that shares this layer's buffer waits for the release just recorded).
                for (std::size_t l = std::size_t(layer) + 1; l < m_stagedLayers.size(); ++l)
                    if (m_stagedLayers[l]) {
                        check(m_expertCache->prefetch(int(l)));
                        break;
                    }
            }
        }
        if (shared) {
            if (beside)
                check(cudaStreamWaitEvent(m_stream, m_join, 0));
            if (!sharedInNorm)
                check(cuda::addGatedSharedExpert(
                    m_normedRows, L.sharedGate, sharedDown, T, m_hidden, m_deltaRows, m_stream));
        }
    });
}

void CudaBackend::computeLogits(std::int64_t first, std::int64_t count)
{
    check(cuda::gatherF32Rows(
        m_normedRows, m_layoutBuffer.logitRows() + first, count, m_hidden, m_logitInput, m_stream));
    linear(m_w.output, m_logitInput, m_hidden, count, m_logits, m_description.hparams.vocabSize);
    check(cuda::countNonFinite(
        m_logits, count * m_description.hparams.vocabSize, m_nonFinite, m_stream));
    check(cuda::argmaxRows(m_logits, count, m_description.hparams.vocabSize, m_greedy + first,
        m_greedyValue + first, m_argmaxWorkspace, m_stream));
    if (const auto* draws = m_layoutBuffer.draws())
        check(cuda::drawTokens(m_logits, count, m_description.hparams.vocabSize, draws + first,
            m_greedy + first, m_stream));
}

void CudaBackend::runOps()
{
    check(cudaMemsetAsync(m_nonFinite, 0, sizeof(int), m_stream));
    for (const auto& op : m_ops)
        op();
    check(cuda::countNonFinite(
        m_hiddenRows, std::int64_t(m_layout.rows) * m_hidden, m_nonFinite, m_stream));
}

bool CudaBackend::runStep()
{
    check(m_layoutBuffer.upload(m_stream));
    const int rows = m_layout.rows;
    // One graph per batch size, with and without the token draws' kernel, with and without
    // host views.
    const int key = 4 * rows + (m_stepView != DecodeViewTrial::InPlace ? 2 : 0)
        + (m_layoutBuffer.draws() ? 1 : 0);
    // Graphs take decode steps whose logits fit one pass of the logits buffer, and greedy-only
    // decode steps of any batch (their logits stay on the device, a pass at a time).
    const bool graphable = m_decode && std::int64_t(m_step->logitRows.size()) == rows
        && (rows <= m_logitPass || !m_step->wantLogits);
    // The view trial's steps are timed however they run (a size that never replays a graph
    // would otherwise keep alternating views), all but a size's first, eager one.
    auto timed = [&](auto&& run) {
        m_viewTimeRecorded = m_viewTimed;
        if (m_viewTimed)
            check(cudaEventRecord(m_viewStart, m_stream));
        run();
        if (m_viewTimed)
            check(cudaEventRecord(m_viewStop, m_stream));
    };
    if (!graphable) {
        timed([&] { runOps(); });
        return false;
    }
    auto allLogits = [&] {
        for (std::int64_t first = 0; first < rows; first += m_logitPass)
            computeLogits(first, std::min<std::int64_t>(m_logitPass, rows - first));
    };
    auto eager = [&] {
        runOps();
        allLogits();
        return true;
    };
    if (m_noGraph.count(key)) {
        timed(eager);
        return true;
    }
    auto found = m_graphs.find(key);
    if (found == m_graphs.end()) {
        if (!m_warmed.count(key)) { // the first step of a size runs eagerly: modules load
            m_warmed.insert(key);
            return eager();
        }
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        bool captured
            = cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess;
        if (captured) {
            const cudaError_t before = m_error;
            runOps();
            allLogits();
            captured = cudaStreamEndCapture(m_stream, &graph) == cudaSuccess && m_error == before
                && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
            m_error = before;
            if (graph)
                cudaGraphDestroy(graph);
        }
        if (!captured) { // a kernel that cannot be captured: this size stays eager
            cudaGetLastError();
            m_noGraph.insert(key);
            return eager();
        }
        found = m_graphs.emplace(key, exec).first;
    }
    timed([&] { check(cudaGraphLaunch(found->second, m_stream)); });
    return true;
}

Result<StepOutput> CudaBackend::finishStep()
{
    const auto& hp = m_description.hparams;
    const std::int64_t rows = std::int64_t(m_step->logitRows.size()), V = hp.vocabSize;
    const bool wantLogits = m_step->wantLogits;
    // Which rows' logits cross to the host (a step of greedy and sampled sequences copies the
    // sampled ones only: 248,320 floats a row on the target model).
    const auto& hostRows = m_step->hostRows;
    auto toHost = [&](std::int64_t row) {
        return wantLogits && (hostRows.empty() || hostRows[std::size_t(row)]);
    };
    std::int64_t hostCount = 0;
    for (std::int64_t r = 0; r < rows; ++r)
        hostCount += toHost(r) ? 1 : 0;
    StepOutput out;
    if (wantLogits)
        out.logits.resize(std::size_t(hostCount * V));
    out.greedy.resize(std::size_t(rows));
    std::int64_t hostDone = 0; // rows of out.logits filled
    const bool profiled = g_profiledStep > 0 && ++g_stepsRun == g_profiledStep;
    if (profiled)
        cudaProfilerStart();
    m_viewTimeRecorded = false;
    const bool graphed = runStep();
    int bad = 0;
    // Logits leave the device m_logitPass rows at a time (the pinned staging buffer); a
    // graphed step has computed every row's (wantLogits: one pass of rows at most).
    const std::int64_t pass = graphed ? rows : m_logitPass;
    for (std::int64_t first = 0; first < rows; first += pass) {
        const std::int64_t n = std::min<std::int64_t>(pass, rows - first);
        if (!graphed)
            computeLogits(first, n);
        std::byte* staging = reinterpret_cast<std::byte*>(m_logitsHost);
        std::int64_t selected = 0;
        for (std::int64_t r = first; r < first + n; ++r)
            selected += toHost(r) ? 1 : 0;
        const std::size_t rowBytes = std::size_t(V) * sizeof(float);
        const std::size_t logitBytes = std::size_t(selected) * rowBytes;
        if (selected == n) {
            check(cudaMemcpyAsync(staging, m_logits, logitBytes, cudaMemcpyDeviceToHost, m_stream));
        } else {
            std::int64_t at = 0;
            for (std::int64_t r = first; r < first + n; ++r)
                if (toHost(r))
                    check(cudaMemcpyAsync(staging + std::size_t(at++) * rowBytes,
                        m_logits + (r - first) * V, rowBytes, cudaMemcpyDeviceToHost, m_stream));
        }
        check(cudaMemcpyAsync(staging + logitBytes, m_greedy + first, std::size_t(n) * 4,
            cudaMemcpyDeviceToHost, m_stream));
        check(cudaMemcpyAsync(staging + logitBytes + std::size_t(n) * 4, m_nonFinite, sizeof(int),
            cudaMemcpyDeviceToHost, m_stream));
        check(cudaStreamSynchronize(m_stream));
        if (m_error != cudaSuccess)
            break;
        if (logitBytes > 0)
            std::memcpy(out.logits.data() + hostDone * V, staging, logitBytes);
        hostDone += selected;
        std::memcpy(out.greedy.data() + first, staging + logitBytes, std::size_t(n) * 4);
        std::memcpy(&bad, staging + logitBytes + std::size_t(n) * 4, sizeof(int));
        if (bad)
            break;
    }
    if (profiled)
        cudaProfilerStop();
    float viewMs = 0.0f;
    if (m_viewTimeRecorded && m_error == cudaSuccess
        && cudaEventElapsedTime(&viewMs, m_viewStart, m_viewStop) == cudaSuccess)
        m_viewTrial.record(int(rows), m_stepView, double(viewMs) * 1e-3);
    m_step = nullptr;
    if (m_error != cudaSuccess) {
        const cudaError_t e = m_error;
        m_error = cudaSuccess;
        cudaGetLastError();
        const std::string file = m_errorWhere.file_name();
        return cudaFailure("the forward step failed on " + deviceName() + " (at "
                + file.substr(file.find_last_of('/') + 1) + ":"
                + std::to_string(m_errorWhere.line()) + ")",
            e);
    }
    if (bad && !g_skip.any())
        return makeError("the forward pass produced NaN or Inf in the hidden state or the logits "
                         "(on the GPU; the CPU backend names the layer)");
    m_keptRows = rows <= m_logitPass ? rows : 0;
    return out;
}

Result<std::vector<float>> CudaBackend::keptLogits(std::span<const std::int64_t> rows)
{
    const std::size_t V = std::size_t(m_description.hparams.vocabSize);
    for (const std::int64_t r : rows)
        if (r < 0 || r >= m_keptRows)
            return makeError("the last step kept no logits for row " + std::to_string(r));
    if (auto e = cudaSetDevice(m_options.device); e != cudaSuccess)
        return cudaFailure("selecting cuda:" + std::to_string(m_options.device), e);
    // Through the pinned staging buffer (m_logitPass rows, and rows <= m_keptRows <= that).
    std::vector<float> out(rows.size() * V);
    for (std::size_t i = 0; i < rows.size(); ++i)
        if (auto e = cudaMemcpyAsync(m_logitsHost + i * V, m_logits + std::size_t(rows[i]) * V,
                V * sizeof(float), cudaMemcpyDeviceToHost, m_stream);
            e != cudaSuccess)
            return cudaFailure("copying a step's logits to the host", e);
    if (auto e = cudaStreamSynchronize(m_stream); e != cudaSuccess)
        return cudaFailure("copying a step's logits to the host", e);
    std::memcpy(out.data(), m_logitsHost, out.size() * sizeof(float));
    return out;
}

} // namespace

Result<std::unique_ptr<Backend>> createCudaBackend(const ModelDescription& description,
    const ModelWeights& weights, const CudaBackendOptions& options)
{
    auto backend = std::make_unique<CudaBackend>(description, weights, options);
    if (auto ok = backend->initialise(); !ok)
        return ok.error();
    return std::unique_ptr<Backend>(std::move(backend));
}

} // namespace cw::engine
