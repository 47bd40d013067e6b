#pragma once

// The backend-ops table (in the spirit of ggml's test-backend-ops): every CUDA entry point of
// kernels/cuda against the CPU op it stands for, one row per (op, shape, type, precision).
// Each cases_*.cpp adds the rows of one kernel family to a CaseTable; backend_ops_main.cpp
// registers them as gtest tests (the quick rows by default, all of them with --full), runs
// them and prints one table row per case (with --perf, each op's time and GB/s too).

#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/quant/quant_products.h"

#include <cstddef>
#include <cstdint>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <functional>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

// In a case body: a CUDA call that must succeed, else the case fails naming the call.
#define BO_CUDA_OK(expr)                                                                           \
    do {                                                                                           \
        const cudaError_t boStatus = (expr);                                                       \
        ASSERT_EQ(boStatus, cudaSuccess) << #expr << ": " << cudaGetErrorString(boStatus);         \
    } while (0)

namespace cw::backend_ops {

using kernels::cuda::GemmPrecision;

const char* precisionName(GemmPrecision precision);

// How far a result may be from the CPU's: the largest |got - want| over the largest |want|
// (the figure the whole-model comparison uses), and optionally ||got - want|| / ||want||.
struct Tolerance {
    double maxScaled = 1e-5;
    double relativeL2 = 0.0; // 0: not checked
};

// One output of a case compared with the CPU's.
struct Comparison {
    std::string output; // "y", "ids", "weights", "state" ...
    std::size_t count = 0;
    double maxAbs = 0.0; // largest |got - want|
    double scale = 0.0; // largest |want|
    double scaled = 0.0; // maxAbs / scale (0 when scale is 0 and maxAbs is 0)
    double relativeL2 = 0.0;
    std::int64_t nonFinite = 0; // non-finite got where want is finite
    std::int64_t mismatches = 0; // exact comparisons: elements that differ
    std::string worstAt; // the worst element's place, in the case's words
    double worstGot = 0.0, worstWant = 0.0;
    Tolerance tolerance;
    bool exact = false;
    bool ok = true;
    std::string message() const;
};

// What a case body gets: the stream and cuBLAS handle (bound to the stream), a CPU thread pool
// for the references, a seeded generator, and where its comparisons and timing go.
class CaseContext {
public:
    CaseContext(cudaStream_t stream, cublasHandle_t cublas, kernels::ThreadPool* pool, bool perf,
        std::uint32_t seed);

    cudaStream_t stream() const { return m_stream; }
    cublasHandle_t cublas() const { return m_cublas; }
    kernels::ThreadPool* pool() const { return m_pool; }
    std::mt19937& rng() { return m_rng; }
    bool perf() const { return m_perf; }

    // Compares got with want (same size) within `tolerance`; `where(i)` names element i in
    // the failure message ("token 3, row 1021"). Returns whether it passed.
    // scaleFloor: the least |want| the errors are measured against (a product of one row has
    // one value, which may lie near zero; its natural scale is ||w|| ||x|| / sqrt(cols)).
    bool check(const std::string& output, const std::vector<float>& got,
        const std::vector<float>& want, Tolerance tolerance,
        const std::function<std::string(std::size_t)>& where = {}, double scaleFloor = 0.0);
    // Integer outputs (ids, argmax indices) that must be equal; up to `allowed` may differ
    // (a near tie the case explains).
    bool checkExact(const std::string& output, const std::vector<std::int32_t>& got,
        const std::vector<std::int32_t>& want,
        const std::function<std::string(std::size_t)>& where = {}, std::int64_t allowed = 0);

    // With --perf: times `launch` (one warm-up, then the median of repeated launches on the
    // stream) and records bytes / time. Call it after the checks (it may launch in-place ops
    // again). Without --perf it does nothing.
    void measure(double bytes, const std::function<cudaError_t(cudaStream_t)>& launch);

    // A word for the table's note column (the kernel path the dispatch took, say).
    void note(const std::string& text) { m_note += (m_note.empty() ? "" : "; ") + text; }
    const std::string& noteText() const { return m_note; }

    // The case does not apply on this device or build (named reason); it is shown skipped.
    void skip(const std::string& reason) { m_skipped = reason; }

    const std::vector<Comparison>& comparisons() const { return m_comparisons; }
    const std::string& skipped() const { return m_skipped; }
    double microseconds() const { return m_microseconds; }
    double bytes() const { return m_bytes; }
    const std::string& timingError() const { return m_timingError; }

private:
    cudaStream_t m_stream;
    cublasHandle_t m_cublas;
    kernels::ThreadPool* m_pool;
    bool m_perf;
    std::mt19937 m_rng;
    std::vector<Comparison> m_comparisons;
    std::string m_skipped;
    std::string m_note;
    double m_microseconds = -1.0;
    double m_bytes = 0.0;
    std::string m_timingError;
};

struct OpCase {
    std::string op; // the entry point: "linear", "routerTopK", "pagedAttention" ...
    std::string shape; // type, sizes and precision: "q4_K rows 4097 cols 256 tokens 9 bf16"
    bool quick = false; // in the default (ctest) subset
    std::function<void(CaseContext&)> run;
};

class CaseTable {
public:
    void add(std::string op, std::string shape, bool quick, std::function<void(CaseContext&)> run)
    {
        m_cases.push_back({ std::move(op), std::move(shape), quick, std::move(run) });
    }
    const std::vector<OpCase>& cases() const { return m_cases; }

private:
    std::vector<OpCase> m_cases;
};

// The families (cases_*.cpp).
void addLinearCases(CaseTable& table);
void addMoeCases(CaseTable& table);
void addAttentionCases(CaseTable& table);
void addDeltaNetCases(CaseTable& table);
void addRowCases(CaseTable& table);

// Device memory freed on scope exit; filled with 0xFF bytes (NaN as floats) so values a
// kernel fails to write show as non-finite.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes) { allocate(bytes); }
    ~DeviceBuffer() { cudaFree(m_data); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept
        : m_data(o.m_data)
        , m_bytes(o.m_bytes)
        , m_error(o.m_error)
    {
        o.m_data = nullptr;
        o.m_bytes = 0;
    }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept
    {
        if (this != &o) {
            cudaFree(m_data);
            m_data = o.m_data;
            m_bytes = o.m_bytes;
            m_error = o.m_error;
            o.m_data = nullptr;
            o.m_bytes = 0;
        }
        return *this;
    }

    cudaError_t allocate(std::size_t bytes)
    {
        cudaFree(m_data);
        m_data = nullptr;
        m_bytes = bytes;
        m_error = cudaMalloc(&m_data, bytes ? bytes : 1);
        if (m_error == cudaSuccess)
            m_error = cudaMemset(m_data, 0xFF, bytes ? bytes : 1);
        return m_error;
    }
    template <class T> static DeviceBuffer of(const std::vector<T>& host)
    {
        DeviceBuffer b(host.size() * sizeof(T));
        if (b.m_error == cudaSuccess && !host.empty())
            b.m_error = cudaMemcpy(b.m_data, host.data(), b.m_bytes, cudaMemcpyHostToDevice);
        return b;
    }
    template <class T> cudaError_t download(std::vector<T>& host) const
    {
        host.resize(m_bytes / sizeof(T));
        return cudaMemcpy(host.data(), m_data, host.size() * sizeof(T), cudaMemcpyDeviceToHost);
    }
    cudaError_t poison() const { return cudaMemset(m_data, 0xFF, m_bytes ? m_bytes : 1); }
    template <class T = void> T* get() const { return static_cast<T*>(m_data); }
    std::size_t bytes() const { return m_bytes; }
    cudaError_t error() const { return m_error; }
    kernels::cuda::DeviceScratch scratch() const
    {
        return { static_cast<std::byte*>(m_data), m_bytes };
    }

private:
    void* m_data = nullptr;
    std::size_t m_bytes = 0;
    cudaError_t m_error = cudaSuccess;
};

// Normal(0, scale) floats, never exactly zero.
std::vector<float> randomFloats(std::size_t n, std::mt19937& rng, float scale = 1.0f);
std::vector<float> uniformFloats(std::size_t n, std::mt19937& rng, float lo, float hi);

// "token 3, row 1021" for element i of rows of `width` values.
std::function<std::string(std::size_t)> rowsOf(
    std::int64_t width, const char* rowName = "token", const char* columnName = "col");

} // namespace cw::backend_ops
