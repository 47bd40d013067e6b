// geometry_check: the whole model on the CPU and on a CUDA device, against transformers'
// float32 logits, on the random geometries tests/golden/make_geometries.py writes.
//   geometry_check --manifest DIR/manifest.json [--table PATH] [--shard I/N] [--threads T]
//                  [--device cuda:0] [--precision f32|tf32|bf16] [--bar 1e-3]
// For every config of the shard and every file of it (the HF folder and its GGUFs), each
// device runs: the all-position logits of each prompt (one sequence, as `score` does); a
// batched step of mixed-length prefills then decode steps of all sequences together; and a
// prefix-cache hit (a prefilled prefix forked, the fork continuing the prompt, the root another
// way). Each (test, device) row gives max|err| / max|logit| and top-1 agreement against
// transformers and, for the GPU, against the CPU on the same file. Pass: within `bar` of
// transformers for the exact formats (hf, f32, f16, bf16: the weights are bf16 values, held
// exactly), and the GPU within `bar` of the CPU for every format (the quantized ones' distance
// to transformers is the quantization's, shown as information).
#include "engine/model_files/model_loader.h"
#include "engine/runtime/model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace {

using cw::engine::ForwardRequest;
using cw::engine::Model;
using cw::engine::Sequence;
using json = nlohmann::json;

struct Settings {
    std::string manifest;
    std::string table;
    int shard = 0, shards = 1;
    int threads = 0;
    std::string device = "cuda:0";
    std::string precision = "f32";
    double bar = 1e-3;
};

// A float32 .npy of shape (rows, cols), C order.
struct Matrix {
    std::int64_t rows = 0, cols = 0;
    std::vector<float> data;
    const float* row(std::int64_t r) const { return data.data() + r * cols; }
};

std::optional<Matrix> readNpy(const std::string& path, std::string& error)
{
    std::ifstream in(path, std::ios::binary);
    char magic[8];
    if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
        error = path + ": not a .npy file";
        return std::nullopt;
    }
    std::uint32_t headerLength = 0;
    if (magic[6] == 1) {
        std::uint16_t n = 0;
        in.read(reinterpret_cast<char*>(&n), 2);
        headerLength = n;
    } else {
        in.read(reinterpret_cast<char*>(&headerLength), 4);
    }
    std::string header(headerLength, '\0');
    in.read(header.data(), headerLength);
    if (header.find("'descr': '<f4'") == std::string::npos
        || header.find("'fortran_order': False") == std::string::npos) {
        error = path + ": expected little-endian float32 in C order, header " + header;
        return std::nullopt;
    }
    const auto shape = header.find("'shape': (");
    Matrix m;
    if (shape == std::string::npos
        || std::sscanf(header.c_str() + shape + 10, "%lld, %lld",
               reinterpret_cast<long long*>(&m.rows), reinterpret_cast<long long*>(&m.cols))
            != 2) {
        error = path + ": expected a 2-D shape, header " + header;
        return std::nullopt;
    }
    m.data.resize(std::size_t(m.rows * m.cols));
    if (!in.read(reinterpret_cast<char*>(m.data.data()), std::streamsize(m.data.size() * 4))) {
        error = path + ": shorter than its shape";
        return std::nullopt;
    }
    return m;
}

// Logits rows a test produced, each at a position of its prompt.
struct Rows {
    std::vector<std::int64_t> positions;
    std::vector<float> data; // [positions][vocab]
    std::string error; // set: the test failed to run
};

struct Figures {
    double err = 0.0; // max|a - b| / max|b|
    double top1 = 0.0; // fraction of rows with the same argmax
    std::int64_t rows = 0;
    std::int64_t worstRow = 0; // the row of the largest |a - b|
};

std::int64_t argmaxOf(const float* x, std::int64_t n)
{
    return std::max_element(x, x + n) - x;
}

Figures compare(const float* a, const float* b, std::int64_t rows, std::int64_t vocab)
{
    Figures f;
    double worst = 0.0, scale = 0.0;
    std::int64_t same = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* x = a + r * vocab;
        const float* y = b + r * vocab;
        for (std::int64_t i = 0; i < vocab; ++i) {
            const double d
                = std::isfinite(x[i]) ? std::fabs(double(x[i]) - double(y[i])) : INFINITY;
            if (d > worst) {
                worst = d;
                f.worstRow = r;
            }
            scale = std::max(scale, std::fabs(double(y[i])));
        }
        same += argmaxOf(x, vocab) == argmaxOf(y, vocab);
    }
    f.err = scale > 0 ? worst / scale : worst;
    f.top1 = rows ? double(same) / double(rows) : 0.0;
    f.rows = rows;
    return f;
}

struct Prompt {
    std::int64_t length = 0;
    std::vector<std::int32_t> ids;
    std::vector<std::int64_t> positions; // stored rows of the reference
    std::string logitsPath;
};

// The reference rows of `prompt` at `positions` (each must be stored).
bool referenceRows(const Prompt& prompt, const Matrix& ref,
    const std::vector<std::int64_t>& positions, std::vector<float>& out)
{
    out.clear();
    for (const std::int64_t p : positions) {
        const auto it = std::find(prompt.positions.begin(), prompt.positions.end(), p);
        if (it == prompt.positions.end())
            return false;
        const std::int64_t r = it - prompt.positions.begin();
        out.insert(out.end(), ref.row(r), ref.row(r) + ref.cols);
    }
    return true;
}

std::string message(const cw::Error& e)
{
    return e.message;
}

// Runs every test of one file on one device.
class Runner {
public:
    Runner(Model& model, std::int64_t vocab)
        : m_model(model)
        , m_vocab(vocab)
    {
    }

    // One sequence, every position (as `score`), rows at the reference's stored positions.
    Rows score(const Prompt& prompt)
    {
        Rows r;
        auto seq = m_model.newSequence();
        auto logits = m_model.prefill(*seq, prompt.ids, true);
        if (!logits) {
            r.error = message(logits.error());
            return r;
        }
        for (const std::int64_t p : prompt.positions) {
            r.positions.push_back(p);
            r.data.insert(
                r.data.end(), logits->begin() + p * m_vocab, logits->begin() + (p + 1) * m_vocab);
        }
        return r;
    }

    // Sequences prefilled together to `lengths` in one step (last-token logits), then `steps`
    // decode steps of all of them together, each fed its prompt's next token.
    Rows batch(const Prompt& prompt, const std::vector<std::int64_t>& lengths, int steps)
    {
        Rows r;
        for (const std::int64_t n : lengths)
            if (n < 1 || n + steps > prompt.length) {
                r.error = "batch length " + std::to_string(n) + " + " + std::to_string(steps)
                    + " steps is past the prompt's " + std::to_string(prompt.length) + " tokens";
                return r;
            }
        std::vector<std::unique_ptr<Sequence>> seqs;
        std::vector<ForwardRequest> requests;
        for (const std::int64_t n : lengths) {
            seqs.push_back(m_model.newSequence());
            requests.push_back({ seqs.back().get(),
                std::span<const std::int32_t>(prompt.ids.data(), std::size_t(n)), false });
        }
        auto first = m_model.step(requests);
        if (!first) {
            r.error = "mixed prefill step: " + message(first.error());
            return r;
        }
        for (std::size_t i = 0; i < lengths.size(); ++i) {
            r.positions.push_back(lengths[i] - 1);
            r.data.insert(r.data.end(), first->begin() + std::int64_t(i) * m_vocab,
                first->begin() + std::int64_t(i + 1) * m_vocab);
        }
        for (int s = 0; s < steps; ++s) {
            requests.clear();
            for (std::size_t i = 0; i < lengths.size(); ++i)
                requests.push_back({ seqs[i].get(),
                    std::span<const std::int32_t>(prompt.ids.data() + lengths[i] + s, 1), false });
            auto out = m_model.step(requests);
            if (!out) {
                r.error = "decode step " + std::to_string(s + 1) + ": " + message(out.error());
                return r;
            }
            for (std::size_t i = 0; i < lengths.size(); ++i) {
                r.positions.push_back(lengths[i] + s);
                r.data.insert(r.data.end(), out->begin() + std::int64_t(i) * m_vocab,
                    out->begin() + std::int64_t(i + 1) * m_vocab);
            }
        }
        return r;
    }

    // A prefix of `shared` tokens prefilled once; a fork continues with the rest of the prompt
    // (all positions), then the root continues with the same 5 tokens on its own blocks.
    Rows prefix(const Prompt& prompt, std::int64_t shared)
    {
        Rows r;
        if (shared < 1 || shared >= prompt.length) {
            r.error = "prefix of " + std::to_string(shared) + " tokens does not fit the prompt";
            return r;
        }
        const std::span<const std::int32_t> ids(prompt.ids);
        auto root = m_model.newSequence();
        auto head = m_model.prefill(*root, ids.subspan(0, std::size_t(shared)), false);
        if (!head) {
            r.error = "prefix prefill: " + message(head.error());
            return r;
        }
        auto fork = m_model.fork(*root);
        auto rest = m_model.prefill(*fork, ids.subspan(std::size_t(shared)), true);
        if (!rest) {
            r.error = "fork continuing: " + message(rest.error());
            return r;
        }
        for (std::int64_t p = shared; p < prompt.length; ++p) {
            r.positions.push_back(p);
            r.data.insert(r.data.end(), rest->begin() + (p - shared) * m_vocab,
                rest->begin() + (p - shared + 1) * m_vocab);
        }
        const std::int64_t more = std::min<std::int64_t>(5, prompt.length - shared);
        auto again
            = m_model.prefill(*root, ids.subspan(std::size_t(shared), std::size_t(more)), true);
        if (!again) {
            r.error = "root continuing after the fork: " + message(again.error());
            return r;
        }
        for (std::int64_t p = 0; p < more; ++p) {
            r.positions.push_back(shared + p);
            r.data.insert(
                r.data.end(), again->begin() + p * m_vocab, again->begin() + (p + 1) * m_vocab);
        }
        return r;
    }

private:
    Model& m_model;
    std::int64_t m_vocab;
};

struct TableRow {
    std::string config, arch, format, test, device;
    std::optional<Figures> vsReference, vsCpu;
    std::string status, note;
};

bool exactFormat(const std::string& format)
{
    return format == "hf" || format == "f32" || format == "f16" || format == "bf16";
}

// One test as both devices ran it: its rows' comparisons and pass/fail.
void judge(const TableRow& base, const Rows& cpu, const Rows* gpu, const Prompt& prompt,
    const Matrix& ref, std::int64_t vocab, double bar, std::vector<TableRow>& table)
{
    auto rowFor = [&](const Rows& rows, const std::string& device, const Rows* against) {
        TableRow t = base;
        t.device = device;
        if (!rows.error.empty()) {
            t.status = "ERROR";
            t.note = rows.error;
            return t;
        }
        std::vector<float> want;
        if (referenceRows(prompt, ref, rows.positions, want))
            t.vsReference = compare(
                rows.data.data(), want.data(), std::int64_t(rows.positions.size()), vocab);
        else
            t.note = "no reference rows at these positions";
        bool pass = true;
        if (exactFormat(base.format))
            pass = t.vsReference && t.vsReference->err <= bar;
        if (against) {
            if (!against->error.empty()) {
                t.note += "CPU failed; ";
            } else if (against->positions == rows.positions) {
                t.vsCpu = compare(rows.data.data(), against->data.data(),
                    std::int64_t(rows.positions.size()), vocab);
                pass = pass && t.vsCpu->err <= bar;
            }
        }
        t.status = pass ? (exactFormat(base.format) || against ? "pass" : "info") : "FAIL";
        // Where: one position (a near-tied expert choice, say) or every one.
        const std::optional<Figures>& failed
            = t.vsCpu && t.vsCpu->err > bar ? t.vsCpu : t.vsReference;
        if (!pass && failed && !rows.positions.empty())
            t.note += "worst at position "
                + std::to_string(rows.positions[std::size_t(failed->worstRow)]);
        return t;
    };
    table.push_back(rowFor(cpu, "cpu", nullptr));
    if (gpu)
        table.push_back(rowFor(*gpu, base.device, &cpu));
}

std::unique_ptr<Model> load(const std::string& path, const std::string& device, const Settings& s,
    std::int64_t context, std::string& error)
{
    auto description = cw::engine::openModel(path);
    if (!description) {
        error = description.error().message;
        return nullptr;
    }
    cw::engine::ModelOptions options;
    options.device = device;
    options.threads = s.threads;
    options.integerProducts = false; // the CPU at its most exact: float activations
    options.gpuPrecision = s.precision;
    options.contextLength = context;
    options.maxSequences = 8;
    auto model = Model::create(std::move(*description), options);
    if (!model) {
        error = model.error().message;
        return nullptr;
    }
    return std::move(*model);
}

void printTable(
    std::FILE* out, const std::vector<TableRow>& table, double seconds, const Settings& s)
{
    std::fprintf(out, "%-18s %-12s %-7s %-22s %-7s %12s %7s %12s %7s  %-6s %s\n", "config", "arch",
        "format", "test", "device", "err_vs_ref", "top1", "err_vs_cpu", "top1", "status", "note");
    std::map<std::string, int> counts;
    for (const TableRow& t : table) {
        auto fig = [](const std::optional<Figures>& f, bool top) {
            char b[32];
            if (!f)
                return std::string("-");
            std::snprintf(b, sizeof b, top ? "%.3f" : "%.3g", top ? f->top1 : f->err);
            return std::string(b);
        };
        std::fprintf(out, "%-18s %-12s %-7s %-22s %-7s %12s %7s %12s %7s  %-6s %s\n",
            t.config.c_str(), t.arch.c_str(), t.format.c_str(), t.test.c_str(), t.device.c_str(),
            fig(t.vsReference, false).c_str(), fig(t.vsReference, true).c_str(),
            fig(t.vsCpu, false).c_str(), fig(t.vsCpu, true).c_str(), t.status.c_str(),
            t.note.c_str());
        ++counts[t.status];
    }
    std::fprintf(out,
        "err = max|logit - reference| / max|reference logit| (reference: transformers float32; "
        "vs_cpu: the CPU backend on the same file); bar %.3g; GPU precision %s\n",
        s.bar, s.precision.c_str());
    std::fprintf(out, "%zu rows: %d pass, %d FAIL, %d ERROR, %d info (shard %d/%d, %.0f s)\n",
        table.size(), counts["pass"], counts["FAIL"], counts["ERROR"], counts["info"], s.shard,
        s.shards, seconds);
}

int run(const Settings& s)
{
    const auto start = std::chrono::steady_clock::now();
    std::ifstream in(s.manifest);
    if (!in) {
        std::fprintf(stderr, "geometry_check: cannot read %s\n", s.manifest.c_str());
        return 2;
    }
    const json manifest = json::parse(in, nullptr, false);
    if (manifest.is_discarded() || !manifest.contains("configs")) {
        std::fprintf(stderr, "geometry_check: %s is not a manifest of make_geometries.py\n",
            s.manifest.c_str());
        return 2;
    }
    std::vector<TableRow> table;
    int index = -1;
    for (const json& c : manifest["configs"]) {
        if (++index % s.shards != s.shard)
            continue;
        const std::string name = c.value("name", "?"), arch = c.value("arch", "?");
        std::vector<Prompt> prompts;
        std::int64_t longest = 0;
        for (const json& p : c["prompts"]) {
            Prompt q;
            q.length = p["length"].get<std::int64_t>();
            q.ids = p["ids"].get<std::vector<std::int32_t>>();
            q.positions = p["positions"].get<std::vector<std::int64_t>>();
            q.logitsPath = p["logits"].get<std::string>();
            longest = std::max(longest, q.length);
            prompts.push_back(std::move(q));
        }
        std::map<std::int64_t, Matrix> refs;
        std::string error;
        for (const Prompt& p : prompts) {
            auto m = readNpy(p.logitsPath, error);
            if (!m)
                break;
            if (m->rows != std::int64_t(p.positions.size())) {
                error = p.logitsPath + ": " + std::to_string(m->rows) + " rows for "
                    + std::to_string(p.positions.size()) + " stored positions";
                break;
            }
            refs[p.length] = std::move(*m);
        }
        const json files = c.value("files", json::object());
        for (const std::string& format : c["formats"].get<std::vector<std::string>>()) {
            TableRow base { name, arch, format, "", s.device, {}, {}, "", "" };
            if (!error.empty() || !files.contains(format)) {
                base.test = "load";
                base.device = "-";
                base.status = "ERROR";
                base.note = error.empty() ? "no " + format + " file (conversion failed?)" : error;
                table.push_back(base);
                continue;
            }
            const std::string path = files[format].get<std::string>();
            std::string cpuError, gpuError;
            auto cpuModel = load(path, "cpu", s, longest + 16, cpuError);
            auto gpuModel
                = s.device.empty() ? nullptr : load(path, s.device, s, longest + 16, gpuError);
            if (!cpuModel || (!s.device.empty() && !gpuModel)) {
                base.test = "load";
                base.device = cpuModel ? s.device : "cpu";
                base.status = "ERROR";
                base.note = cpuModel ? gpuError : cpuError;
                table.push_back(base);
                continue;
            }
            const std::int64_t vocab = cpuModel->vocabSize();
            if (!refs.empty() && refs.begin()->second.cols != vocab) {
                base.test = "load";
                base.status = "ERROR";
                base.note = "the reference logits have " + std::to_string(refs.begin()->second.cols)
                    + " columns, the model a vocabulary of " + std::to_string(vocab);
                table.push_back(base);
                continue;
            }
            Runner cpu(*cpuModel, vocab);
            std::optional<Runner> gpu;
            if (gpuModel)
                gpu.emplace(*gpuModel, vocab);
            for (const Prompt& p : prompts) {
                // The quantized files: the prompts that cross the kernels' thresholds most.
                if (!exactFormat(format) && p.length != 1 && p.length != 65 && p.length != 647)
                    continue;
                base.test = "prompt " + std::to_string(p.length);
                const Rows a = cpu.score(p);
                const Rows b = gpu ? gpu->score(p) : Rows {};
                judge(base, a, gpu ? &b : nullptr, p, refs[p.length], vocab, s.bar, table);
            }
            const std::int64_t batchPrompt = c.value("batch_prompt", std::int64_t(0));
            const Prompt* bp = nullptr;
            for (const Prompt& p : prompts)
                if (p.length == batchPrompt)
                    bp = &p;
            if (bp && c.contains("batch")) {
                const auto lengths = c["batch"]["lengths"].get<std::vector<std::int64_t>>();
                const int steps = c["batch"]["steps"].get<int>();
                std::string text = "batch";
                for (const std::int64_t n : lengths)
                    text += (text.size() > 5 ? "," : " ") + std::to_string(n);
                base.test = text + " +" + std::to_string(steps);
                const Rows a = cpu.batch(*bp, lengths, steps);
                const Rows b = gpu ? gpu->batch(*bp, lengths, steps) : Rows {};
                judge(base, a, gpu ? &b : nullptr, *bp, refs[bp->length], vocab, s.bar, table);
            }
            if (bp && c.contains("prefix")) {
                const std::int64_t shared = c["prefix"]["shared"].get<std::int64_t>();
                base.test
                    = "prefix " + std::to_string(shared) + " of " + std::to_string(bp->length);
                const Rows a = cpu.prefix(*bp, shared);
                const Rows b = gpu ? gpu->prefix(*bp, shared) : Rows {};
                judge(base, a, gpu ? &b : nullptr, *bp, refs[bp->length], vocab, s.bar, table);
            }
            std::fflush(stdout);
        }
        std::fprintf(
            stderr, "geometry_check: %s done (%zu rows so far)\n", name.c_str(), table.size());
    }
    const double seconds
        = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    printTable(stdout, table, seconds, s);
    if (!s.table.empty()) {
        if (std::FILE* f = std::fopen(s.table.c_str(), "w")) {
            printTable(f, table, seconds, s);
            std::fclose(f);
        } else {
            std::fprintf(stderr, "geometry_check: cannot write %s\n", s.table.c_str());
        }
    }
    for (const TableRow& t : table)
        if (t.status == "FAIL" || t.status == "ERROR")
            return 1;
    return table.empty() ? 1 : 0;
}

} // namespace

int main(int argc, char** argv)
{
    Settings s;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "geometry_check: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--manifest")
            s.manifest = value();
        else if (a == "--table")
            s.table = value();
        else if (a == "--threads")
            s.threads = std::stoi(value());
        else if (a == "--device")
            s.device = value();
        else if (a == "--precision")
            s.precision = value();
        else if (a == "--bar")
            s.bar = std::stod(value());
        else if (a == "--shard") {
            const std::string v = value();
            if (std::sscanf(v.c_str(), "%d/%d", &s.shard, &s.shards) != 2 || s.shards < 1
                || s.shard < 0 || s.shard >= s.shards) {
                std::fprintf(stderr, "geometry_check: --shard wants I/N with 0 <= I < N\n");
                return 2;
            }
        } else {
            std::printf(
                "geometry_check --manifest DIR/manifest.json [--table PATH] [--shard I/N]\n"
                "               [--threads T] [--device cuda:0|\"\"] [--precision f32|tf32|bf16]\n"
                "               [--bar 1e-3]\n"
                "The whole model on the CPU and on a CUDA device against transformers'\n"
                "float32 logits, on the geometries of tests/golden/make_geometries.py.\n");
            return a == "--help" || a == "-h" ? 0 : 2;
        }
    }
    if (s.manifest.empty()) {
        std::fprintf(stderr, "geometry_check: --manifest is required (see --help)\n");
        return 2;
    }
    return run(s);
}
