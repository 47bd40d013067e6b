// A model over its GPU memory budget keeps its least chosen routed experts in host memory
// (engine/backend/cuda/expert_cache.h). Whatever the split, and whether a step reads the host
// experts in place or copies them first, the products are the same kernels on the same bytes:
// the logits must equal those with every expert on the GPU, and so the greedy tokens.
#include "engine/model_files/model_loader.h"
#include "engine/model_files/model_presets.h"
#include "engine/runtime/model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <regex>

namespace fs = std::filesystem;
using cw::engine::ForwardRequest;
using cw::engine::Model;
using cw::engine::ModelOptions;

namespace {

std::string synthModel(const std::string& preset, const std::string& mix)
{
    const fs::path dir = fs::path(CW_TEST_BINARY_DIR) / "synth";
    fs::create_directories(dir);
    const fs::path path = dir / (preset + "-" + mix + "-offload.gguf");
    if (!fs::exists(path)) {
        auto written = cw::engine::synthesizeGguf(
            *cw::engine::findModelPreset(preset), mix, 13, path.string());
        EXPECT_TRUE(written.ok()) << (written.ok() ? "" : written.error().message);
    }
    return path.string();
}

// budget 0: the card's free memory.
std::unique_ptr<Model> load(const std::string& path, const std::string& precision,
    std::uint64_t budget, bool keepCounts = false)
{
    auto description = cw::engine::openModel(path);
    if (!description)
        return nullptr;
    ModelOptions options;
    options.device = "cuda:0";
    options.gpuPrecision = precision;
    options.integerProducts = precision == "bf16";
    options.prefillChunk = 64;
    options.contextLength = 512;
    options.maxSequences = 16;
    options.gpuMemoryGiB = double(budget) / double(1ull << 30);
    options.keepExpertCounts = keepCounts;
    auto model = Model::create(std::move(*description), options);
    return model ? std::move(*model) : nullptr;
}

// "N of M routed experts on the GPU" in the plan; {-1, -1} when nothing is offloaded.
std::pair<long, long> cached(const Model& model)
{
    std::smatch m;
    const std::string plan = model.memoryPlan();
    if (!std::regex_search(plan, m, std::regex("([0-9,]+) of ([0-9,]+) routed experts on the GPU")))
        return { -1, -1 };
    auto number = [](std::string s) {
        s.erase(std::remove(s.begin(), s.end(), ','), s.end());
        return std::stol(s);
    };
    return { number(m[1]), number(m[2]) };
}

// The least budget that holds every expert: bisection to the byte, as the tests load one byte
// under it.
std::uint64_t wholeModelBudget(const std::string& path, const std::string& precision)
{
    std::uint64_t lo = 1 << 20, hi = 2ull << 30;
    while (hi - lo > 1) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        auto model = load(path, precision, mid);
        if (model && cached(*model).first < 0)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

// The least budget the model loads with at all (every routed expert in host memory, or nearly).
std::uint64_t leastBudget(const std::string& path, const std::string& precision, std::uint64_t hi)
{
    std::uint64_t lo = 1 << 20;
    while (hi - lo > 4096) {
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (load(path, precision, mid))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

std::vector<std::int32_t> randomTokens(std::size_t n, std::int64_t vocab, unsigned seed)
{
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::int32_t> pick(0, std::int32_t(vocab - 1));
    std::vector<std::int32_t> ids(n);
    for (auto& id : ids)
        id = pick(rng);
    return ids;
}

// A 150-token prompt (three steps of 64, all logits) and 12 decode steps of 12 sequences:
// every logit it produced, the greedy tokens, and the tokens each decode step was given.
struct RunResult {
    std::vector<float> logits;
    std::vector<std::int32_t> tokens, fed;
    std::size_t decodeFrom = 0; // logits[decodeFrom..]: the decode steps'
};

// `teacher`: a run whose fed tokens this one is given too, so that every step's logits answer
// the same input even where close logits (bf16 against the CPU's products) pick another token.
RunResult run(Model& model, const RunResult* teacher = nullptr)
{
    RunResult r;
    const auto prompt = randomTokens(150, model.vocabSize(), 5);
    std::vector<std::unique_ptr<cw::engine::Sequence>> seqs;
    std::vector<std::int32_t> next;
    for (int s = 0; s < 12; ++s) {
        seqs.push_back(model.newSequence());
        const std::span<const std::int32_t> part(prompt.data(), 100 + std::size_t(s) * 4);
        auto logits = model.prefill(*seqs.back(), part, s == 0);
        EXPECT_TRUE(logits.ok()) << logits.error().message;
        if (!logits)
            return r;
        r.logits.insert(r.logits.end(), logits->begin(), logits->end());
        const std::int64_t V = model.vocabSize();
        const float* last = logits->data() + (logits->size() / std::size_t(V) - 1) * std::size_t(V);
        next.push_back(std::int32_t(std::max_element(last, last + V) - last));
    }
    r.decodeFrom = r.logits.size();
    for (int step = 0; step < 12; ++step) {
        std::vector<ForwardRequest> requests;
        for (std::size_t s = 0; s < seqs.size(); ++s) {
            if (teacher)
                next[s] = teacher->fed[std::size_t(step) * seqs.size() + s];
            r.fed.push_back(next[s]);
            requests.push_back(
                { seqs[s].get(), std::span<const std::int32_t>(&next[s], 1), false });
        }
        auto logits = model.step(requests);
        EXPECT_TRUE(logits.ok()) << logits.error().message;
        if (!logits)
            return r;
        r.logits.insert(r.logits.end(), logits->begin(), logits->end());
        const std::int64_t V = model.vocabSize();
        for (std::size_t s = 0; s < seqs.size(); ++s) {
            const float* row = logits->data() + s * std::size_t(V);
            next[s] = std::int32_t(std::max_element(row, row + V) - row);
            r.tokens.push_back(next[s]);
        }
    }
    return r;
}

struct Case {
    std::string preset, mix, precision;
};

class ExpertOffload : public ::testing::TestWithParam<Case> { };

} // namespace

TEST_P(ExpertOffload, givesTheLogitsOfEveryExpertOnTheGpu)
{
    const auto [preset, mix, precision] = GetParam();
    const std::string path = synthModel(preset, mix);
    auto whole = load(path, precision, 0);
    ASSERT_TRUE(whole);
    ASSERT_EQ(cached(*whole).first, -1) << whole->memoryPlan();
    const RunResult reference = run(*whole);
    whole.reset();
    const std::uint64_t fits = wholeModelBudget(path, precision);
    const std::uint64_t least = leastBudget(path, precision, fits);
    // Just under the whole model (staging buffers where they fit), the least that loads (few
    // or no experts cached) and half way, each read in place, staged, with the CPU computing
    // the host experts of decode steps, and as the cost model chooses.
    for (const std::uint64_t budget : { fits - 1, least + (fits - least) / 2, least }) {
        // "host": every host choice on the CPU; "halves": half of each token's on the CPU, the
        // rest read in place beside it; "split": shared by the cost model; "": the cost model's
        // choice, which may take the host view for decode.
        for (const std::string mode : { "inplace", "staged", "host", "halves", "split", "" }) {
            if (mode.empty())
                unsetenv("CW_CUDA_EXPERTS");
            else
                setenv("CW_CUDA_EXPERTS", mode.c_str(), 1);
            auto model = load(path, precision, budget);
            ASSERT_TRUE(model) << "budget " << budget;
            const auto [onGpu, total] = cached(*model);
            ASSERT_GE(onGpu, 0) << "budget " << budget << ": " << model->memoryPlan();
            ASSERT_LT(onGpu, total);
            std::printf("%s %s %s, budget %llu (%s): %s\n", preset.c_str(), mix.c_str(),
                precision.c_str(), static_cast<unsigned long long>(budget), mode.c_str(),
                model->memoryPlan().c_str());
            const RunResult got = run(*model, &reference);
            ASSERT_EQ(got.logits.size(), reference.logits.size());
            if (mode == "inplace" || mode == "staged") {
                std::size_t differ = 0;
                for (std::size_t i = 0; i < got.logits.size(); ++i)
                    differ += got.logits[i] != reference.logits[i];
                EXPECT_EQ(differ, 0u) << "of " << got.logits.size() << " logits (" << mode << ")";
                EXPECT_EQ(got.tokens, reference.tokens) << mode;
                continue;
            }
            // The CPU's products round in another order: the decode steps' logits are close,
            // not equal. At f32 the tokens are the same. At bf16 the CPU quantizes x as Q8_K
            // where the GPU takes two int8 planes, and on these random models that flips
            // near-tied router choices of later layers for some tokens, which moves those
            // logits a lot (0.15-0.23 of the largest logit on the H100, 2026-12-07, the
            // reference's tokens given to both): held, like the GPU's own integer decode
            // against the CPU (cuda_vs_cpu_test.cpp), to an RMS of the difference of at most
            // 0.15 of the logits' RMS, where a wrong expert or scale gives about 1.
            double worst = 0.0, largest = 0.0, diff2 = 0.0, sum = 0.0, sum2 = 0.0;
            const std::size_t from = reference.decodeFrom;
            for (std::size_t i = 0; i < got.logits.size(); ++i) {
                const double d = double(got.logits[i]) - double(reference.logits[i]);
                worst = std::max(worst, std::abs(d));
                largest = std::max(largest, double(std::abs(reference.logits[i])));
                if (i >= from) {
                    diff2 += d * d;
                    sum += reference.logits[i];
                    sum2 += double(reference.logits[i]) * double(reference.logits[i]);
                }
            }
            const double n = double(got.logits.size() - from);
            const double rmsDiff = std::sqrt(diff2 / n);
            const double rmsLogit = std::sqrt(std::max(sum2 / n - (sum / n) * (sum / n), 0.0));
            std::printf("  host experts: max|logit difference| %.3g of max|logit| %.3g; decode "
                        "RMS difference %.3g of RMS %.3g\n",
                worst, largest, rmsDiff, rmsLogit);
            if (precision == "f32") {
                EXPECT_LE(worst, 1e-3 * largest) << mode;
                EXPECT_EQ(got.tokens, reference.tokens) << mode;
            } else {
                EXPECT_GT(rmsLogit, 0.0);
                EXPECT_LE(rmsDiff, 0.15 * rmsLogit) << mode;
            }
        }
    }
    unsetenv("CW_CUDA_EXPERTS");
    // Under the least: the error names the budget and what even the offloaded model needs.
    auto description = cw::engine::openModel(path);
    ASSERT_TRUE(description.ok());
    ModelOptions options;
    options.device = "cuda:0";
    options.gpuPrecision = precision;
    options.prefillChunk = 64;
    options.contextLength = 512;
    options.maxSequences = 16;
    options.gpuMemoryGiB = double(least - 8192) / double(1ull << 30);
    options.keepExpertCounts = false;
    auto failed = Model::create(std::move(*description), options);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.error().message.find("even with its routed experts in host memory"),
        std::string::npos)
        << failed.error().message;
    EXPECT_NE(failed.error().message.find("--gpu-memory"), std::string::npos)
        << failed.error().message;
}

INSTANTIATE_TEST_SUITE_P(Mixes, ExpertOffload,
    ::testing::Values(Case { "tiny-qwen3.6-moe", "f32", "f32" },
        Case { "tiny-qwen3.6-moe", "q4_k_m", "bf16" }, Case { "tiny-qwen3-moe", "q8_0", "f32" },
        Case { "tiny-qwen3-moe", "q4_k_m", "bf16" }),
    [](const auto& info) {
        std::string name = info.param.preset + "_" + info.param.mix + "_" + info.param.precision;
        for (char& c : name)
            if (!std::isalnum(static_cast<unsigned char>(c)))
                c = '_';
        return name;
    });

// Routing counts outlive the model: written to its cache folder, read at the next load.
TEST(ExpertOffloadCounts, areKeptInTheModelsCacheFolder)
{
    const fs::path cache = fs::path(CW_TEST_BINARY_DIR) / "expert-cache-home";
    fs::remove_all(cache);
    setenv("XDG_CACHE_HOME", cache.c_str(), 1);
    const std::string path = synthModel("tiny-qwen3.6-moe", "f32");
    const std::uint64_t budget = wholeModelBudget(path, "f32") - 1;
    {
        auto model = load(path, "f32", budget, true);
        ASSERT_TRUE(model);
        ASSERT_GE(cached(*model).first, 0) << model->memoryPlan();
        run(*model);
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(cache))
        if (entry.path().filename() == "expert-counts.bin")
            files.push_back(entry.path());
    ASSERT_EQ(files.size(), 1u);
    // Magic, layers, experts, then a count per layer and expert: 4 layers of 8 here.
    EXPECT_EQ(fs::file_size(files[0]), 16u + 4u * 8u * 8u);
    std::ifstream in(files[0], std::ios::binary);
    std::vector<std::uint64_t> counts(32);
    in.seekg(16);
    in.read(reinterpret_cast<char*>(counts.data()), 32 * 8);
    std::uint64_t total = 0;
    for (auto c : counts)
        total += c;
    // Every token of the run chose 2 experts in each of the 4 layers.
    EXPECT_EQ(total,
        (12u * 100u + 4u * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 10 + 11) + 12u * 12u) * 2u
            * 4u);
    unsetenv("XDG_CACHE_HOME");
}
