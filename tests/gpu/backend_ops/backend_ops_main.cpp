// gpu_backend_ops: every CUDA entry point against the CPU op on a table of shapes.
//   gpu_backend_ops [--full] [--perf] [--table PATH] [gtest flags]
// Default: the quick subset (the ctest label `gpu`). --full: the whole table. --perf: each
// case's op is also timed (median launch time and GB/s of the bytes it must move). The table
// (one row per case: op, shape, worst error over tolerance, status, time, GB/s) is printed at
// the end and, with --table, written to PATH. Without a CUDA device: exit 77 (skipped).
#include "kernels/compute_devices.h"
#include "tests/gpu/backend_ops/backend_ops.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace cw::backend_ops {
namespace {

struct Settings {
    bool full = false;
    bool perf = false;
    std::string tablePath;
};

// What the table prints of one case once it has run.
struct Row {
    const OpCase* c = nullptr;
    std::string status = "not run";
    double worstScaled = 0.0;
    double tolerance = 0.0;
    std::string worstOutput;
    double microseconds = -1.0;
    double bytes = 0.0;
    std::string note;
};

// The stream, cuBLAS handle and CPU pool every case shares.
struct Shared {
    cudaStream_t stream = nullptr;
    cublasHandle_t cublas = nullptr;
    std::unique_ptr<kernels::ThreadPool> pool;
    bool perf = false;
    std::string lostContextAfter; // the case in which a kernel faulted, if one did
};

Shared& shared()
{
    static Shared s;
    return s;
}

std::string testName(const std::string& shape)
{
    std::string name;
    for (char ch : shape)
        name += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
    return name;
}

class CaseTest : public ::testing::Test {
public:
    CaseTest(const OpCase* c, Row* row, std::uint32_t seed)
        : m_case(c)
        , m_row(row)
        , m_seed(seed)
    {
    }
    void TestBody() override
    {
        Shared& s = shared();
        // A kernel that faulted (an illegal address) leaves the context unusable: every later
        // case would fail for that one. They are shown skipped, naming the case that faulted.
        if (!s.lostContextAfter.empty()) {
            m_row->status = "skipped";
            m_row->note = "not run: the CUDA context was lost in " + s.lostContextAfter;
            GTEST_SKIP() << m_row->note;
        }
        CaseContext context(s.stream, s.cublas, s.pool.get(), s.perf, m_seed);
        SCOPED_TRACE(m_case->op + " " + m_case->shape);
        m_case->run(context);
        const cudaError_t sticky = cudaStreamSynchronize(s.stream);
        EXPECT_EQ(sticky, cudaSuccess) << m_case->op << " " << m_case->shape
                                       << ": the stream ended in " << cudaGetErrorString(sticky);
        cudaGetLastError();
        if (cudaDeviceSynchronize() != cudaSuccess) {
            s.lostContextAfter = m_case->op + " " + m_case->shape;
            ADD_FAILURE() << m_case->op << " " << m_case->shape
                          << ": the CUDA context is lost (a kernel faulted); the cases after it "
                             "cannot run (run this one alone with --gtest_filter to diagnose)";
        }
        m_row->status = HasFailure() ? "FAIL" : "ok";
        double worstOver = -1.0; // the worst comparison: its error over its tolerance
        for (const Comparison& c : context.comparisons()) {
            EXPECT_TRUE(c.ok) << m_case->op << " " << m_case->shape << ": " << c.message();
            const double over = c.exact ? double(c.mismatches)
                                        : c.scaled / std::max(c.tolerance.maxScaled, 1e-300);
            if (over > worstOver) {
                worstOver = over;
                m_row->worstScaled = c.exact ? double(c.mismatches) : c.scaled;
                m_row->tolerance = c.exact ? 0.0 : c.tolerance.maxScaled;
                m_row->worstOutput = c.output + (c.exact ? " (differ)" : "");
            }
            if (!c.ok)
                m_row->status = "FAIL";
        }
        m_row->note = context.noteText();
        m_row->microseconds = context.microseconds();
        m_row->bytes = context.bytes();
        if (!context.timingError().empty())
            m_row->note += " timing: " + context.timingError();
        if (!context.skipped().empty()) {
            m_row->status = "skipped";
            m_row->note = context.skipped();
            GTEST_SKIP() << m_case->op << " " << m_case->shape << ": " << context.skipped();
        }
        if (context.comparisons().empty() && !HasFailure()) {
            m_row->status = "FAIL";
            ADD_FAILURE() << m_case->op << " " << m_case->shape << ": compared nothing";
        }
    }

private:
    const OpCase* m_case;
    Row* m_row;
    std::uint32_t m_seed;
};

void printTable(const std::vector<Row>& rows, std::FILE* out, const Settings& settings)
{
    int passed = 0, failed = 0, skipped = 0;
    std::fprintf(out, "%-22s %-64s %-10s %-10s %-8s %-20s", "op", "shape", "max|err|*", "tolerance",
        "status", "worst output");
    if (settings.perf)
        std::fprintf(out, " %10s %9s", "time_us", "GB/s");
    std::fprintf(out, "  note\n");
    for (const Row& r : rows) {
        if (r.status == "not run")
            continue;
        passed += r.status == "ok";
        failed += r.status == "FAIL";
        skipped += r.status == "skipped";
        std::fprintf(out, "%-22s %-64s %-10.3g %-10.3g %-8s %-20s", r.c->op.c_str(),
            r.c->shape.c_str(), r.worstScaled, r.tolerance, r.status.c_str(),
            r.worstOutput.c_str());
        if (settings.perf) {
            if (r.microseconds >= 0)
                std::fprintf(out, " %10.1f %9.1f", r.microseconds,
                    r.bytes > 0 ? r.bytes / (r.microseconds * 1e3) : 0.0);
            else
                std::fprintf(out, " %10s %9s", "-", "-");
        }
        std::fprintf(out, "  %s\n", r.note.c_str());
    }
    std::fprintf(out,
        "* max|got - want| / max|want| of the worst output (for exact outputs: elements that "
        "differ)\n%d cases: %d ok, %d failed, %d skipped (%s table)\n",
        passed + failed + skipped, passed, failed, skipped, settings.full ? "full" : "quick");
}

int run(int argc, char** argv)
{
    Settings settings;
    std::vector<char*> rest { argv[0] };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--full")
            settings.full = true;
        else if (a == "--perf")
            settings.perf = true;
        else if (a == "--table" && i + 1 < argc)
            settings.tablePath = argv[++i];
        else if (a.rfind("--table=", 0) == 0)
            settings.tablePath = a.substr(8);
        else if (a == "--help" || a == "-h") {
            std::printf("gpu_backend_ops [--full] [--perf] [--table PATH] [gtest flags]\n"
                        "  every CUDA entry point of kernels/cuda against the CPU op\n"
                        "  --full        the whole table (default: the quick subset)\n"
                        "  --perf        also time each op (median) and print GB/s\n"
                        "  --table PATH  write the result table to PATH too\n");
            return 0;
        } else
            rest.push_back(argv[i]);
    }
    int gtestArgc = int(rest.size());
    ::testing::InitGoogleTest(&gtestArgc, rest.data());

    static CaseTable table;
    addLinearCases(table);
    addMoeCases(table);
    addAttentionCases(table);
    addDeltaNetCases(table);
    addRowCases(table);
    static std::vector<Row> rows(table.cases().size());
    std::set<std::string> used;
    for (std::size_t i = 0; i < table.cases().size(); ++i) {
        const OpCase* c = &table.cases()[i];
        rows[i].c = c;
        if (!settings.full && !c->quick)
            continue;
        const std::string suite = testName(c->op);
        std::string name = testName(c->shape);
        for (int n = 2; used.count(suite + "." + name) > 0; ++n)
            name = testName(c->shape) + "_" + std::to_string(n);
        used.insert(suite + "." + name);
        Row* row = &rows[i];
        const std::uint32_t seed = std::uint32_t(1000 + i);
        ::testing::RegisterTest(suite.c_str(), name.c_str(), nullptr, c->shape.c_str(), __FILE__,
            __LINE__, [c, row, seed]() -> ::testing::Test* { return new CaseTest(c, row, seed); });
    }
    // Listing needs no device; running does.
    if (GTEST_FLAG_GET(list_tests)) {
        std::printf("%zu cases in the table, %zu registered (%s)\n", table.cases().size(),
            used.size(), settings.full ? "full" : "quick");
        return RUN_ALL_TESTS();
    }
    if (kernels::cudaDeviceCount() == 0) {
        std::printf("no CUDA device: skipping\n");
        return 77;
    }
    Shared& s = shared();
    s.perf = settings.perf;
    if (cudaStreamCreate(&s.stream) != cudaSuccess
        || cublasCreate(&s.cublas) != CUBLAS_STATUS_SUCCESS
        || cublasSetStream(s.cublas, s.stream) != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "cannot create a CUDA stream and cuBLAS handle\n");
        return 1;
    }
    s.pool = std::make_unique<kernels::ThreadPool>(0);

    const int result = RUN_ALL_TESTS();
    std::fflush(stdout);
    printTable(rows, stdout, settings);
    if (!settings.tablePath.empty()) {
        if (std::FILE* f = std::fopen(settings.tablePath.c_str(), "w")) {
            printTable(rows, f, settings);
            std::fclose(f);
        } else {
            std::fprintf(stderr, "cannot write %s\n", settings.tablePath.c_str());
        }
    }
    cublasDestroy(s.cublas);
    cudaStreamDestroy(s.stream);
    return result;
}

} // namespace
} // namespace cw::backend_ops

int main(int argc, char** argv)
{
    return cw::backend_ops::run(argc, argv);
}
