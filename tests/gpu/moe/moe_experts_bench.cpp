// routedExperts at the Qwen3.6-35B-A3B shapes (hidden 2048, 256 experts of ffn 512, k = 8;
// Q4_K gate and up, Q6_K down): median time of repeats with CUDA events, GB/s of the expert
// weight bytes touched (decode) and TFLOP/s (prefill), for both paths where both apply.
// Usage: gpu_moe_bench [repeats] [only this token count]
#include "kernels/cpu/quant/quantize.h"
#include "kernels/cuda/moe/moe_experts.h"
#include "kernels/cuda/moe/moe_paths.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime_api.h>
#include <functional>
#include <numeric>
#include <random>
#include <set>
#include <vector>

using namespace cw::kernels;
using cuda::DeviceExpertStack;
using cuda::DeviceScratch;
using cuda::GemmPrecision;

namespace {

constexpr std::int64_t kExperts = 256, kHidden = 2048, kFfn = 512;
constexpr int kK = 8;

#define CHECK(call)                                                                                \
    do {                                                                                           \
        const cudaError_t e_ = (call);                                                             \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(                                                                          \
                stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));      \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

// One random expert quantized, copied to every expert slot (distinct addresses, so no cache
// sees a repeat; the values do not matter for the timing).
DeviceExpertStack makeStack(
    TensorType type, std::int64_t rows, std::int64_t cols, std::mt19937& rng)
{
    const std::size_t rowBytes = std::size_t(*cw::kernels::rowBytes(type, std::uint64_t(cols)));
    std::vector<std::uint8_t> one(rowBytes * std::size_t(rows));
    std::normal_distribution<float> dist(0.0f, 0.5f);
    std::vector<float> v(static_cast<std::size_t>(cols));
    for (std::int64_t r = 0; r < rows; ++r) {
        for (auto& x : v)
            x = dist(rng);
        quant::quantizeRow(type, v.data(), one.data() + std::size_t(r) * rowBytes, cols);
    }
    void* data = nullptr;
    CHECK(cudaMalloc(&data, one.size() * std::size_t(kExperts)));
    for (std::int64_t e = 0; e < kExperts; ++e)
        CHECK(cudaMemcpy(static_cast<std::uint8_t*>(data) + std::size_t(e) * one.size(), one.data(),
            one.size(), cudaMemcpyHostToDevice));
    DeviceExpertStack s;
    s.type = type;
    s.data = data;
    s.expertStride = one.size();
    s.rowStride = rowBytes;
    s.rows = rows;
    s.cols = cols;
    s.experts = kExperts;
    return s;
}

double medianMs(int repeats, cudaStream_t stream, const std::function<void()>& call)
{
    for (int i = 0; i < 3; ++i)
        call();
    std::vector<double> ms;
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int i = 0; i < repeats; ++i) {
        CHECK(cudaEventRecord(a, stream));
        call();
        CHECK(cudaEventRecord(b, stream));
        CHECK(cudaEventSynchronize(b));
        float t = 0.0f;
        CHECK(cudaEventElapsedTime(&t, a, b));
        ms.push_back(t);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

double relativeError(const std::vector<float>& out, const std::vector<float>& ref)
{
    double d = 0.0, n = 0.0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        d += (double(out[i]) - ref[i]) * (double(out[i]) - ref[i]);
        n += double(ref[i]) * ref[i];
    }
    return std::sqrt(d / n);
}

} // namespace

int main(int argc, char** argv)
{
    const int repeats = argc > 1 ? std::atoi(argv[1]) : 20;
    const std::int64_t only = argc > 2 ? std::atoll(argv[2]) : 0;
    std::mt19937 rng(7);
    const DeviceExpertStack gate = makeStack(TensorType::Q4_K, kFfn, kHidden, rng);
    const DeviceExpertStack up = makeStack(TensorType::Q4_K, kFfn, kHidden, rng);
    const DeviceExpertStack down = makeStack(TensorType::Q6_K, kHidden, kFfn, rng);
    const double expertBytes = double(gate.expertStride + up.expertStride + down.expertStride);
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));

    const std::int64_t maxTokens = 8192;
    std::size_t scratchBytes = 0;
    for (const GemmPrecision p : { GemmPrecision::Float32, GemmPrecision::BFloat16 })
        scratchBytes = std::max(
            { scratchBytes, cuda::routedExpertsScratchBytes(maxTokens, kK, gate, down, p),
                cuda::moe::decodeScratchBytes(maxTokens, kK, kFfn),
                cuda::moe::intDecodeScratchBytes(64, kK, kFfn, kHidden) });
    void *x, *ids, *w, *out, *scratch;
    CHECK(cudaMalloc(&x, maxTokens * kHidden * 4));
    CHECK(cudaMalloc(&ids, maxTokens * kK * 4));
    CHECK(cudaMalloc(&w, maxTokens * kK * 4));
    CHECK(cudaMalloc(&out, maxTokens * kHidden * 4));
    CHECK(cudaMalloc(&scratch, scratchBytes));
    const DeviceScratch s { static_cast<std::byte*>(scratch), scratchBytes };
    std::printf("routedExperts, Qwen3.6 shapes: %lld experts, hidden %lld, ffn %lld, k %d, gate/up "
                "q4_K, down q6_K; %.2f MB per expert; scratch %.1f MB; median of %d\n",
        (long long)kExperts, (long long)kHidden, (long long)kFfn, kK, expertBytes / 1e6,
        double(scratchBytes) / 1e6, repeats);

    std::vector<std::string> summary;
    enum Path { Decode, Direct, MatVec, TilesBf16, TilesF32, Int8 };
    const char* names[]
        = { "decode", "decode direct", "grouped matvec", "tiles bf16", "tiles f32", "decode int8" };
    for (const std::int64_t tokens :
        { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192 }) {
        if (only != 0 && tokens != only)
            continue;
        std::vector<float> hx(std::size_t(tokens * kHidden));
        std::normal_distribution<float> dist(0.0f, 1.0f);
        for (auto& v : hx)
            v = dist(rng);
        std::vector<std::int32_t> hIds(std::size_t(tokens * kK));
        std::vector<float> hW(hIds.size(), 1.0f / kK);
        std::set<int> touched;
        for (std::int64_t t = 0; t < tokens; ++t) {
            std::vector<int> all(kExperts);
            std::iota(all.begin(), all.end(), 0);
            std::shuffle(all.begin(), all.end(), rng);
            for (int j = 0; j < kK; ++j) {
                hIds[std::size_t(t * kK + j)] = all[std::size_t(j)];
                touched.insert(all[std::size_t(j)]);
            }
        }
        CHECK(cudaMemcpy(x, hx.data(), hx.size() * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(ids, hIds.data(), hIds.size() * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(w, hW.data(), hW.size() * 4, cudaMemcpyHostToDevice));
        const double bytes = double(touched.size()) * expertBytes;
        const double flops = 2.0 * double(tokens * kK) * double(3 * kHidden * kFfn);
        const float* fx = static_cast<const float*>(x);
        const auto* fi = static_cast<const std::int32_t*>(ids);
        const float* fw = static_cast<const float*>(w);
        float* fo = static_cast<float*>(out);
        std::vector<float> reference; // the first f32 path's output
        for (const Path path : { Decode, Direct, MatVec, TilesBf16, TilesF32, Int8 }) {
            if ((path == Decode && tokens > 512) || (path == Direct && tokens > 64)
                || (path == Int8 && tokens > 64) || (path == TilesBf16 && tokens < 8)
                || (path == TilesF32 && tokens != 512))
                continue;
            auto call = [&] {
                switch (path) {
                case Decode:
                    CHECK(cuda::moe::routedExpertsDecode(
                        fx, tokens, fi, fw, kK, gate, up, down, fo, s, stream));
                    break;
                case Direct:
                    CHECK(cuda::moe::routedExpertsDecodeDirect(
                        fx, tokens, fi, fw, kK, gate, up, down, fo, s, stream));
                    break;
                case Int8:
                    CHECK(cuda::moe::routedExpertsDecodeInt8(
                        fx, tokens, fi, fw, kK, gate, up, down, fo, s, stream));
                    break;
                case MatVec:
                    CHECK(cuda::moe::routedExpertsGroupedMatVec(
                        fx, tokens, fi, fw, kK, gate, up, down, fo, s, stream));
                    break;
                case TilesBf16:
                case TilesF32:
                    CHECK(cuda::moe::routedExpertsGroupedTiles(fx, tokens, fi, fw, kK, gate, up,
                        down, fo,
                        path == TilesBf16 ? GemmPrecision::BFloat16 : GemmPrecision::Float32, s,
                        stream));
                    break;
                }
            };
            const int r = tokens <= 64 ? repeats * 5 : (tokens >= 4096 ? repeats / 2 + 1 : repeats);
            const double ms = medianMs(r, stream, call);
            std::vector<float> result(hx.size());
            CHECK(cudaMemcpy(result.data(), out, hx.size() * 4, cudaMemcpyDeviceToHost));
            double rel = 0.0;
            if (reference.empty())
                reference = result;
            else
                rel = relativeError(result, reference);
            char line[256];
            std::snprintf(line, sizeof line,
                "tokens %5lld %-14s %9.1f us %6.0f GB/s (%3zu experts) %6.1f TFLOP/s  rel %.2g",
                (long long)tokens, names[path], ms * 1e3, bytes / (ms * 1e-3) / 1e9, touched.size(),
                flops / (ms * 1e-3) / 1e12, rel);
            std::printf("%s\n", line);
            summary.push_back(line);
        }
        if (tokens == 8192) { // where the prefill time goes
            const bool bf16 = true;
            const auto layout = cuda::moe::groupedLayout(
                static_cast<std::byte*>(scratch), tokens, kK, kExperts, kFfn, kHidden, bf16);
            const double g = medianMs(repeats, stream, [&] {
                CHECK(cuda::moe::groupPairsByExpert(
                    fi, tokens * kK, kExperts, cuda::moe::kTileRowsBf16, layout, stream));
            });
            const double gu = medianMs(repeats, stream, [&] {
                CHECK(cuda::moe::groupedGateUp(fx, tokens, kK, gate, up, layout, bf16, stream));
            });
            const double dn = medianMs(repeats, stream,
                [&] { CHECK(cuda::moe::groupedDown(tokens, kK, down, layout, bf16, stream)); });
            const double cb = medianMs(repeats, stream, [&] {
                CHECK(
                    cuda::moe::combineExpertRows(layout, tokens, kK, fi, fw, kHidden, fo, stream));
            });
            char line[256];
            std::snprintf(line, sizeof line,
                "tokens  8192 tiles parts: group %.1f us, gate/up %.1f us (%.1f TFLOP/s), down "
                "%.1f "
                "us (%.1f TFLOP/s), combine %.1f us",
                g * 1e3, gu * 1e3, flops * 2 / 3 / (gu * 1e-3) / 1e12, dn * 1e3,
                flops / 3 / (dn * 1e-3) / 1e12, cb * 1e3);
            std::printf("%s\n", line);
            summary.push_back(line);
        }
    }
    std::printf("--- summary ---\n");
    for (const auto& line : summary)
        std::printf("%s\n", line.c_str());
    return 0;
}
