// The CUDA backend against the CPU backend on the tiny presets of both architectures, for
// every quantization mix synth writes: the same logits (prompt and decode), batched decode
// equal to one sequence at a time, forked prefixes, and the errors a user can meet.
#include "engine/model_files/model_loader.h"
#include "engine/model_files/model_presets.h"
#include "engine/runtime/model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>
#include <random>

namespace fs = std::filesystem;
using cw::engine::ForwardRequest;
using cw::engine::Model;
using cw::engine::ModelOptions;

namespace {

std::string synthModel(const std::string& preset, const std::string& mix)
{
    const fs::path dir = fs::path(CW_TEST_BINARY_DIR) / "synth";
    fs::create_directories(dir);
    const fs::path path = dir / (preset + "-" + mix + ".gguf");
    if (!fs::exists(path)) {
        auto written = cw::engine::synthesizeGguf(
            *cw::engine::findModelPreset(preset), mix, 11, path.string());
        EXPECT_TRUE(written.ok()) << (written.ok() ? "" : written.error().message);
    }
    return path.string();
}

std::unique_ptr<Model> load(
    const std::string& path, const std::string& device, const std::string& precision = "f32")
{
    auto description = cw::engine::openModel(path);
    EXPECT_TRUE(description.ok()) << (description.ok() ? "" : description.error().message);
    if (!description)
        return nullptr;
    ModelOptions options;
    options.device = device;
    options.threads = 2;
    options.integerProducts = false; // float activations: the CPU reference at its most exact
    options.gpuPrecision = precision;
    options.prefillChunk = 24;
    options.contextLength = 512;
    options.maxSequences = 20;
    auto model = Model::create(std::move(*description), options);
    EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
    return model ? std::move(*model) : nullptr;
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

// Largest |a - b| over the largest |b|.
double relativeError(const std::vector<float>& a, const std::vector<float>& b)
{
    double worst = 0, scale = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        worst = std::max(worst, std::fabs(double(a[i]) - double(b[i])));
        scale = std::max(scale, std::fabs(double(b[i])));
    }
    return scale > 0 ? worst / scale : worst;
}

std::int32_t argmax(const std::vector<float>& x, std::int64_t row, std::int64_t vocab)
{
    const float* r = x.data() + row * vocab;
    return std::int32_t(std::max_element(r, r + vocab) - r);
}

struct Case {
    std::string preset;
    std::string mix;
};

class CudaVsCpu : public ::testing::TestWithParam<Case> { };

} // namespace

TEST_P(CudaVsCpu, promptAndDecodeLogitsMatchTheCpu)
{
    const auto [preset, mix] = GetParam();
    const std::string path = synthModel(preset, mix);
    auto cpu = load(path, "cpu");
    auto gpu = load(path, "cuda:0");
    ASSERT_TRUE(cpu && gpu);
    const auto prompt = randomTokens(61, cpu->vocabSize(), 3); // 3 chunks of 24, the last partial
    auto sc = cpu->newSequence();
    auto sg = gpu->newSequence();
    auto lc = cpu->prefill(*sc, prompt, true);
    auto lg = gpu->prefill(*sg, prompt, true);
    ASSERT_TRUE(lc.ok()) << lc.error().message;
    ASSERT_TRUE(lg.ok()) << lg.error().message;
    const double promptError = relativeError(*lg, *lc);
    double decodeError = 0;
    const std::int64_t V = cpu->vocabSize();
    std::int32_t next = argmax(*lc, std::int64_t(prompt.size()) - 1, V);
    for (int i = 0; i < 12; ++i) {
        const ForwardRequest rc { sc.get(), std::span<const std::int32_t>(&next, 1), false };
        const ForwardRequest rg { sg.get(), std::span<const std::int32_t>(&next, 1), false };
        auto dc = cpu->step(std::span<const ForwardRequest>(&rc, 1));
        auto dg = gpu->step(std::span<const ForwardRequest>(&rg, 1));
        ASSERT_TRUE(dc.ok() && dg.ok());
        decodeError = std::max(decodeError, relativeError(*dg, *dc));
        next = argmax(*dc, 0, V);
    }
    std::printf("%s %s: prompt logits error %.3g, decode %.3g (of max |logit|)\n", preset.c_str(),
        mix.c_str(), promptError, decodeError);
    EXPECT_LT(promptError, 1e-3);
    EXPECT_LT(decodeError, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(EveryMix, CudaVsCpu,
    ::testing::Values(Case { "tiny-qwen3-moe", "f32" }, Case { "tiny-qwen3-moe", "f16" },
        Case { "tiny-qwen3-moe", "bf16" }, Case { "tiny-qwen3-moe", "q8_0" },
        Case { "tiny-qwen3-moe", "q4_0" }, Case { "tiny-qwen3-moe", "q4_1" },
        Case { "tiny-qwen3-moe", "q5_0" }, Case { "tiny-qwen3-moe", "q5_1" },
        Case { "tiny-qwen3-moe", "q4_k_s" }, Case { "tiny-qwen3-moe", "q4_k_m" },
        Case { "tiny-qwen3-moe", "q5_k_m" }, Case { "tiny-qwen3-moe", "q6_k" },
        Case { "tiny-qwen3.6-moe", "f32" }, Case { "tiny-qwen3.6-moe", "bf16" },
        Case { "tiny-qwen3.6-moe", "q8_0" }, Case { "tiny-qwen3.6-moe", "q4_k_m" },
        Case { "tiny-qwen3.6-moe", "q5_k_s" }, Case { "tiny-qwen3.6-moe", "q6_k" }),
    [](const auto& info) {
        std::string name = info.param.preset + "_" + info.param.mix;
        std::replace_if(
            name.begin(), name.end(),
            [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
        return name;
    });

// A whole prompt's logits in one step (the GPU's default 4,096-token prefill chunk): every row's
// greedy id is kept on the device too, and a 647-row step once wrote past that buffer (sized
// for a decode graph's 64 rows) and failed with cudaErrorInvalidValue, or corrupted the
// greedy search's counters. The CPU runs it in 512-token chunks.
TEST(CudaWholePrompt, allPositionLogitsOfALongPromptInOneStepMatchTheCpu)
{
    for (const std::string preset : { "tiny-qwen3-moe", "tiny-qwen3.6-moe" }) {
        const std::string path = synthModel(preset, "f32");
        auto open = [&](const std::string& device) -> std::unique_ptr<Model> {
            auto description = cw::engine::openModel(path);
            if (!description)
                return nullptr;
            ModelOptions options;
            options.device = device;
            options.threads = 2;
            options.integerProducts = false;
            options.gpuPrecision = "f32";
            options.contextLength = 2048;
            options.maxSequences = 4;
            auto model = Model::create(std::move(*description), options);
            EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
            return model ? std::move(*model) : nullptr;
        };
        auto cpu = open("cpu");
        auto gpu = open("cuda:0");
        ASSERT_TRUE(cpu && gpu);
        for (const std::size_t length : { std::size_t(65), std::size_t(647), std::size_t(1000) }) {
            const auto prompt = randomTokens(length, cpu->vocabSize(), unsigned(length));
            auto sc = cpu->newSequence();
            auto sg = gpu->newSequence();
            auto lc = cpu->prefill(*sc, prompt, true);
            auto lg = gpu->prefill(*sg, prompt, true);
            ASSERT_TRUE(lc.ok()) << lc.error().message;
            ASSERT_TRUE(lg.ok()) << preset << " " << length << ": " << lg.error().message;
            const double error = relativeError(*lg, *lc);
            std::printf("%s, %zu tokens in one step: all-position logits error %.3g\n",
                preset.c_str(), length, error);
            EXPECT_LT(error, 1e-3) << preset << " " << length;
            // The model stays usable and its greedy step agrees after the long step.
            const std::int64_t V = cpu->vocabSize();
            std::int32_t next = argmax(*lc, std::int64_t(length) - 1, V);
            const ForwardRequest rg { sg.get(), std::span<const std::int32_t>(&next, 1), false };
            const ForwardRequest rc { sc.get(), std::span<const std::int32_t>(&next, 1), false };
            auto gg = gpu->stepGreedy(std::span<const ForwardRequest>(&rg, 1));
            auto dc = cpu->step(std::span<const ForwardRequest>(&rc, 1));
            ASSERT_TRUE(gg.ok() && dc.ok());
            EXPECT_EQ((*gg)[0], argmax(*dc, 0, V)) << preset << " " << length;
        }
    }
}

// Geometries whose per-token temporaries are not multiples of four floats: 12 experts, top-3
// (router logits, weights and ids 12 + 3 + 3 floats) and 3 DeltaNet value heads. Packed end to
// end they left the shared expert's output and the DeltaNet gates misaligned for the float4 row
// kernels, and the first one-token step at the default precision failed with
// cudaErrorInvalidValue (found on generated geometries, issue 29).
TEST(CudaOddTemporaries, oneTokenStepsOfOddExpertAndHeadCountsRun)
{
    cw::engine::ModelPreset preset = *cw::engine::findModelPreset("tiny-qwen3.6-moe");
    preset.name = "odd-temporaries";
    preset.hparams.numExperts = 12;
    preset.hparams.numExpertsPerToken = 3;
    preset.hparams.linearNumKeyHeads = 1;
    preset.hparams.linearNumValueHeads = 3;
    const fs::path path = fs::path(CW_TEST_BINARY_DIR) / "synth" / "odd-temporaries-q8_0.gguf";
    fs::create_directories(path.parent_path());
    auto written = cw::engine::synthesizeGguf(preset, "q8_0", 5, path.string());
    ASSERT_TRUE(written.ok()) << written.error().message;
    for (const std::string precision : { "bf16", "f32" }) {
        auto cpu = load(path.string(), "cpu");
        auto gpu = load(path.string(), "cuda:0", precision);
        ASSERT_TRUE(cpu && gpu);
        const std::int64_t V = cpu->vocabSize();
        for (const std::size_t length : { std::size_t(1), std::size_t(3) }) {
            const auto prompt = randomTokens(length, V, unsigned(7 + length));
            auto sc = cpu->newSequence(), sg = gpu->newSequence();
            auto lc = cpu->prefill(*sc, prompt, false);
            auto lg = gpu->prefill(*sg, prompt, false);
            ASSERT_TRUE(lc.ok()) << lc.error().message;
            ASSERT_TRUE(lg.ok()) << precision << " " << length << ": " << lg.error().message;
            const double error = relativeError(*lg, *lc);
            std::printf("odd temporaries, %s, %zu tokens: logits error %.3g\n", precision.c_str(),
                length, error);
            // f32 is the CPU's arithmetic; bf16 rounds (and decodes with 8-bit activations), so
            // it gets a loose bound: a misplaced slice moves the logits by their whole size.
            if (precision == "f32")
                EXPECT_LT(error, 1e-3);
            else
                EXPECT_LT(error, 0.25);
        }
    }
}

// The default (bf16) precision decodes through the integer products (int8 activations),
// which the f32 EveryMix cases above never take. Held to the criterion of the CPU's own integer
// products (tests/engine/runtime/k_quant_products_test.cpp): on these random models 8-bit
// rounding flips near-tied router choices for some tokens, which moves those logits a lot, so
// the check is the RMS of the difference over all logits, at most 0.15 of the logits' RMS (a
// wrong block or scale gives ~1). Not yet run on a GPU (written after this session's device
// time was spent); the largest difference seen there for tiny-qwen3.6-moe was 0.16 of the
// largest logit, tiny-qwen3-moe 0.015.
TEST(CudaIntegerDecode, staysNearTheCpuF32LogitsInRms)
{
    for (const std::string preset : { "tiny-qwen3-moe", "tiny-qwen3.6-moe" }) {
        const std::string path = synthModel(preset, "q4_k_m");
        auto cpu = load(path, "cpu");
        auto gpu = load(path, "cuda:0", "bf16");
        ASSERT_TRUE(cpu && gpu);
        const std::int64_t V = cpu->vocabSize();
        const auto prompt = randomTokens(7, V, 11);
        auto sc = cpu->newSequence(), sg = gpu->newSequence();
        auto lc = cpu->prefill(*sc, prompt, false);
        ASSERT_TRUE(lc.ok() && gpu->prefill(*sg, prompt, false).ok());
        std::int32_t next = argmax(*lc, 0, V);
        double diff2 = 0, sum = 0, sum2 = 0, count = 0;
        for (int i = 0; i < 10; ++i) {
            const ForwardRequest rc { sc.get(), std::span<const std::int32_t>(&next, 1), false };
            const ForwardRequest rg { sg.get(), std::span<const std::int32_t>(&next, 1), false };
            auto dc = cpu->step(std::span<const ForwardRequest>(&rc, 1));
            auto dg = gpu->step(std::span<const ForwardRequest>(&rg, 1));
            ASSERT_TRUE(dc.ok() && dg.ok());
            for (std::size_t v = 0; v < dc->size(); ++v) {
                const double d = double((*dg)[v]) - double((*dc)[v]);
                diff2 += d * d;
                sum += (*dc)[v];
                sum2 += double((*dc)[v]) * double((*dc)[v]);
                count += 1;
            }
            next = argmax(*dc, 0, V);
        }
        const double rmsDiff = std::sqrt(diff2 / count);
        const double mean = sum / count;
        const double rmsLogit = std::sqrt(std::max(sum2 / count - mean * mean, 0.0));
        std::printf("%s: RMS of int8 decode - CPU f32 logits %.4g, RMS of the logits %.4g\n",
            preset.c_str(), rmsDiff, rmsLogit);
        EXPECT_GT(rmsLogit, 0.0);
        EXPECT_LE(rmsDiff, 0.15 * rmsLogit) << preset;
    }
}

TEST(CudaBatches, sixteenSequencesDecodedTogetherGiveTheTokensOfEachAlone)
{
    for (const std::string preset : { "tiny-qwen3-moe", "tiny-qwen3.6-moe" }) {
        // f32 products: a batch of 16 takes the prefill path's kernels, one sequence the
        // matrix-vector kernels; in f32 both land within ~1e-6, so any other difference is
        // the batching itself (row layout, KV blocks, recurrent-state slots), which is what
        // this tests. The faster precisions round differently per path by design.
        auto gpu = load(synthModel(preset, "q4_k_m"), "cuda:0", "f32");
        ASSERT_TRUE(gpu);
        const std::int64_t V = gpu->vocabSize();
        constexpr int kSequences = 16, kSteps = 10;
        std::vector<std::vector<std::int32_t>> alone(kSequences);
        for (int s = 0; s < kSequences; ++s) {
            auto seq = gpu->newSequence();
            auto logits = gpu->prefill(*seq, randomTokens(5 + s, V, 100 + unsigned(s)));
            ASSERT_TRUE(logits.ok()) << logits.error().message;
            std::int32_t next = argmax(*logits, 0, V);
            for (int i = 0; i < kSteps; ++i) {
                alone[std::size_t(s)].push_back(next);
                const ForwardRequest r { seq.get(), std::span<const std::int32_t>(&next, 1),
                    false };
                auto ids = gpu->stepGreedy(std::span<const ForwardRequest>(&r, 1));
                ASSERT_TRUE(ids.ok()) << ids.error().message;
                next = (*ids)[0];
            }
        }
        std::vector<std::unique_ptr<cw::engine::Sequence>> seqs;
        std::vector<std::int32_t> next(kSequences);
        for (int s = 0; s < kSequences; ++s) {
            seqs.push_back(gpu->newSequence());
            auto logits = gpu->prefill(*seqs.back(), randomTokens(5 + s, V, 100 + unsigned(s)));
            ASSERT_TRUE(logits.ok());
            next[std::size_t(s)] = argmax(*logits, 0, V);
        }
        int same = 0;
        std::vector<int> firstDifference(kSequences, -1);
        for (int i = 0; i < kSteps; ++i) {
            std::vector<ForwardRequest> requests;
            for (int s = 0; s < kSequences; ++s) {
                const bool equal = next[std::size_t(s)] == alone[std::size_t(s)][std::size_t(i)];
                same += equal;
                if (!equal && firstDifference[std::size_t(s)] < 0)
                    firstDifference[std::size_t(s)] = i;
                requests.push_back({ seqs[std::size_t(s)].get(),
                    std::span<const std::int32_t>(&next[std::size_t(s)], 1), false });
            }
            auto ids = gpu->stepGreedy(requests);
            ASSERT_TRUE(ids.ok()) << ids.error().message;
            next = *ids;
        }
        std::printf("%s: %d of %d greedy tokens the same in a batch of 16\n", preset.c_str(), same,
            kSequences * kSteps);
        for (int s = 0; s < kSequences; ++s)
            if (firstDifference[std::size_t(s)] >= 0)
                std::printf("  sequence %d (prompt of %d tokens) differs from step %d\n", s, 5 + s,
                    firstDifference[std::size_t(s)]);
        EXPECT_EQ(same, kSequences * kSteps);
    }
}

TEST(CudaForks, forkedPrefixesContinueLikeFreshSequences)
{
    for (const std::string preset : { "tiny-qwen3-moe", "tiny-qwen3.6-moe" }) {
        auto gpu = load(synthModel(preset, "q8_0"), "cuda:0");
        ASSERT_TRUE(gpu);
        const std::int64_t V = gpu->vocabSize();
        const auto prefix = randomTokens(37, V, 5); // a partly filled KV block is shared
        auto root = gpu->newSequence();
        ASSERT_TRUE(gpu->prefill(*root, prefix).ok());
        for (unsigned q = 0; q < 4; ++q) {
            const auto tail = randomTokens(9, V, 50 + q);
            auto fork = gpu->fork(*root);
            auto forked = gpu->prefill(*fork, tail, true);
            auto fresh = gpu->newSequence();
            std::vector<std::int32_t> whole = prefix;
            whole.insert(whole.end(), tail.begin(), tail.end());
            auto direct = gpu->prefill(*fresh, whole, true);
            ASSERT_TRUE(forked.ok() && direct.ok());
            const std::vector<float> directTail(
                direct->end() - std::ptrdiff_t(tail.size()) * V, direct->end());
            const double error = relativeError(*forked, directTail);
            std::printf("%s fork %u: error %.3g\n", preset.c_str(), q, error);
            EXPECT_LT(error, 1e-4);
        }
    }
}

TEST(CudaErrors, aMissingDeviceIsRefusedWithAClearMessage)
{
    auto description = cw::engine::openModel(synthModel("tiny-qwen3-moe", "q8_0"));
    ASSERT_TRUE(description.ok());
    ModelOptions options;
    options.device = "cuda:63";
    auto model = Model::create(std::move(*description), options);
    ASSERT_FALSE(model.ok());
    EXPECT_NE(model.error().message.find("cuda:63 does not exist"), std::string::npos)
        << model.error().message;
    EXPECT_NE(model.error().message.find("--device cpu"), std::string::npos);
}

TEST(CudaErrors, aContextPastTheCardIsRefusedWithTheFigures)
{
    auto description = cw::engine::openModel(synthModel("tiny-qwen3-moe", "q8_0"));
    ASSERT_TRUE(description.ok());
    ModelOptions options;
    options.device = "cuda:0";
    options.contextLength = 4096;
    options.maxKvTokens = std::int64_t(1) << 40; // far more KV than any card holds
    auto model = Model::create(std::move(*description), options);
    ASSERT_FALSE(model.ok());
    // The figures: what it needs and what the card has ("but has 76.87 GiB free").
    EXPECT_NE(model.error().message.find("GiB free"), std::string::npos) << model.error().message;
    EXPECT_NE(model.error().message.find("KV cache"), std::string::npos) << model.error().message;
}

TEST(CudaErrors, aSequencePastTheContextFailsOnlyThatRequest)
{
    auto gpu = load(synthModel("tiny-qwen3.6-moe", "q8_0"), "cuda:0");
    ASSERT_TRUE(gpu);
    auto seq = gpu->newSequence();
    auto tooLong = gpu->prefill(*seq, randomTokens(600, gpu->vocabSize(), 1));
    ASSERT_FALSE(tooLong.ok());
    auto fine = gpu->newSequence();
    EXPECT_TRUE(gpu->prefill(*fine, randomTokens(20, gpu->vocabSize(), 2)).ok());
}
