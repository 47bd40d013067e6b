// Micro-benchmark of the CUDA quantized products (not a test): matrix-vector GB/s of weight
// bytes per type at 1 and 8 token rows, and prefill TFLOP/s per GemmPrecision.
//
// Matrix-vector timings: 20 launches captured in a CUDA graph (as decode replays them), each
// on another copy of the weights so that L2 (50 MB) never holds them, timed with events;
// median of 50 graph launches after warm-up. Weights are random bytes: speed does not depend
// on the values.
#include "kernels/cuda/quant/quant_internal.h"
#include "kernels/cuda/quant/quant_products.h"
#include "tests/gpu/quant/quant_test_support.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cublas_v2.h>
#include <random>
#include <vector>

namespace {

using namespace cw::kernels;
using namespace cw::kernels::cuda;
using cw::kernels::cuda::test::bytesPerRow;
using cw::kernels::cuda::test::typeName;

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        const cudaError_t e_ = (expr);                                                             \
        if (e_ != cudaSuccess) {                                                                   \
            std::printf("%s failed: %s\n", #expr, cudaGetErrorString(e_));                         \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Seconds per call of `launch(i)` (i: the call's index), timed as described above.
template <class Launch> double timeInGraph(cudaStream_t stream, Launch&& launch)
{
    constexpr int kPerGraph = 20;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < kPerGraph; ++i)
        CHECK(launch(i));
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < 3; ++i)
        CHECK(cudaGraphLaunch(exec, stream));
    std::vector<double> samples;
    for (int s = 0; s < 50; ++s) {
        CHECK(cudaEventRecord(start, stream));
        CHECK(cudaGraphLaunch(exec, stream));
        CHECK(cudaEventRecord(stop, stream));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        samples.push_back(ms * 1e-3 / kPerGraph);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return median(samples);
}

void fillFloats(float* device, std::size_t count, std::mt19937& rng)
{
    const std::vector<float> host = test::randomFloats(count, rng);
    CHECK(cudaMemcpy(device, host.data(), count * 4, cudaMemcpyHostToDevice));
}

// Random bytes with every 16-bit half masked to a finite fp16 / bf16 (and every 32-bit word a
// finite f32), so no path sees NaNs; the speed does not depend on the values.
void fillWeights(
    TensorType type, std::int64_t rows, std::int64_t cols, void* device, std::mt19937& rng)
{
    std::vector<std::uint32_t> host((bytesPerRow(type, cols) * std::size_t(rows) + 3) / 4);
    for (auto& v : host)
        v = rng() & 0x3BFF3BFFu;
    CHECK(cudaMemcpy(
        device, host.data(), bytesPerRow(type, cols) * std::size_t(rows), cudaMemcpyHostToDevice));
}

void benchMatVec(
    TensorType type, std::int64_t rows, std::int64_t cols, cudaStream_t stream, std::mt19937& rng)
{
    const std::size_t bytes = bytesPerRow(type, cols) * std::size_t(rows);
    const int copies = int(std::max<std::size_t>(2, (std::size_t(256) << 20) / bytes));
    void* weights = nullptr;
    CHECK(cudaMalloc(&weights, bytes * std::size_t(copies)));
    fillWeights(type, rows, cols, weights, rng);
    for (int c = 1; c < copies; ++c)
        CHECK(cudaMemcpy(
            static_cast<char*>(weights) + bytes * c, weights, bytes, cudaMemcpyDeviceToDevice));
    float *x = nullptr, *y = nullptr;
    CHECK(cudaMalloc(reinterpret_cast<void**>(&x), std::size_t(kMatVecMaxTokens * cols) * 4));
    CHECK(cudaMalloc(reinterpret_cast<void**>(&y), std::size_t(kMatVecMaxTokens * rows) * 4));
    fillFloats(x, std::size_t(kMatVecMaxTokens * cols), rng);
    // Scratch for the integer products' quantized activations (the f32 families ignore it).
    const std::size_t scratchBytes = quant_detail::quantizedRowsBytes(kMatVecMaxTokens, cols, 1);
    void* scratch = nullptr;
    CHECK(cudaMalloc(&scratch, scratchBytes));
    std::printf("matvec %-7s %6lldx%-5lld", typeName(type), (long long)rows, (long long)cols);
    const struct {
        std::int64_t tokens;
        quant_detail::MatVecKernel kernel;
        const char* name;
    } runs[] = { { 1, quant_detail::MatVecKernel::Simt, "simt" },
        { 1, quant_detail::MatVecKernel::Mma, "mma" },
        { 2, quant_detail::MatVecKernel::Simt, "simt" },
        { 2, quant_detail::MatVecKernel::Mma, "mma" },
        { 8, quant_detail::MatVecKernel::Simt, "simt" },
        { 8, quant_detail::MatVecKernel::Mma, "mma" },
        { 1, quant_detail::MatVecKernel::Int8, "int8" },
        { 2, quant_detail::MatVecKernel::Int8, "int8" },
        { 8, quant_detail::MatVecKernel::Int8, "int8" } };
    for (const auto& run : runs) {
        quant_detail::setMatVecKernel(run.kernel);
        const double seconds = timeInGraph(stream, [&](int i) {
            DeviceMatrix w { type, static_cast<char*>(weights) + bytes * (i % copies),
                bytesPerRow(type, cols), rows, cols };
            return linear(w, x, cols, run.tokens, y, rows, GemmPrecision::BFloat16,
                DeviceScratch { static_cast<std::byte*>(scratch), scratchBytes }, nullptr, stream);
        });
        std::printf(" T%lld %s %5.0f", (long long)run.tokens, run.name, bytes / seconds * 1e-9);
    }
    quant_detail::setMatVecKernel(quant_detail::MatVecKernel::Auto);
    std::printf(" GB/s\n");
    cudaFree(weights);
    cudaFree(x);
    cudaFree(y);
    cudaFree(scratch);
}

void benchPrefill(TensorType type, cudaStream_t stream, cublasHandle_t cublas, std::mt19937& rng)
{
    const std::int64_t tokens = 8192, rows = 2048, cols = 8192;
    const std::size_t bytes = bytesPerRow(type, cols) * std::size_t(rows);
    void* weights = nullptr;
    float *x = nullptr, *y = nullptr;
    CHECK(cudaMalloc(&weights, bytes));
    CHECK(cudaMalloc(reinterpret_cast<void**>(&x), std::size_t(tokens * cols) * 4));
    CHECK(cudaMalloc(reinterpret_cast<void**>(&y), std::size_t(tokens * rows) * 4));
    fillWeights(type, rows, cols, weights, rng);
    fillFloats(x, std::size_t(tokens * cols), rng);
    std::printf("prefill %-7s %lldx%lldx%lld", typeName(type), (long long)tokens, (long long)rows,
        (long long)cols);
    const DeviceMatrix w { type, weights, bytesPerRow(type, cols), rows, cols };
    const struct {
        GemmPrecision precision;
        const char* name;
    } precisions[] = { { GemmPrecision::BFloat16, "bf16" },
        { GemmPrecision::TensorFloat32, "tf32" }, { GemmPrecision::Float32, "f32" } };
    for (const auto& p : precisions) {
        const std::size_t scratchBytes = linearScratchBytes(w, tokens, p.precision);
        void* scratch = nullptr;
        CHECK(cudaMalloc(&scratch, scratchBytes));
        auto run = [&] {
            return linear(w, x, cols, tokens, y, rows, p.precision,
                DeviceScratch { static_cast<std::byte*>(scratch), scratchBytes }, cublas, stream);
        };
        cudaEvent_t start, stop;
        CHECK(cudaEventCreate(&start));
        CHECK(cudaEventCreate(&stop));
        CHECK(run());
        CHECK(run());
        std::vector<double> samples;
        for (int s = 0; s < 7; ++s) {
            CHECK(cudaEventRecord(start, stream));
            CHECK(run());
            CHECK(cudaEventRecord(stop, stream));
            CHECK(cudaEventSynchronize(stop));
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, start, stop));
            samples.push_back(ms * 1e-3);
        }
        const double seconds = median(samples);
        std::printf("  %s %6.1f TFLOP/s (%.2f ms)", p.name,
            2.0 * tokens * rows * cols / seconds * 1e-12, seconds * 1e3);
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        cudaFree(scratch);
    }
    std::printf("\n");
    cudaFree(weights);
    cudaFree(x);
    cudaFree(y);
}

} // namespace

int main()
{
    cudaStream_t stream;
    CHECK(cudaStreamCreate(&stream));
    cublasHandle_t cublas;
    if (cublasCreate(&cublas) != CUBLAS_STATUS_SUCCESS
        || cublasSetStream(cublas, stream) != CUBLAS_STATUS_SUCCESS) {
        std::printf("cuBLAS unavailable\n");
        return 1;
    }
    std::mt19937 rng(7);
    for (TensorType type : test::allMatrixTypes()) {
        benchMatVec(type, 2048, 8192, stream, rng);
        benchMatVec(type, 512, 2048, stream, rng);
    }
    benchMatVec(TensorType::Q6_K, 248320, 2048, stream, rng); // the LM head
    for (TensorType type : { TensorType::Q4_K, TensorType::Q6_K, TensorType::BF16 })
        benchPrefill(type, stream, cublas, rng);
    cublasDestroy(cublas);
    cudaStreamDestroy(stream);
    return 0;
}
