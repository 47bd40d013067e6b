// Prints how long the grammar token mask takes over the full Qwen3 vocabulary (151,669 ids)
// in the states that matter for the review schema, and the cost of constrained sampling
// end to end with random logits. Usage: bench_grammar_mask [qwen3_vocab.bin.xz] [repeats]
#include "../../engine/sampling/qwen3_vocab.h"
#include "engine/sampling/grammar_constraint.h"
#include "engine/sampling/sampler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

using namespace cw::sampling;
using Clock = std::chrono::steady_clock;

namespace {

const char* kSchema = R"({"type":"object","properties":{
 "category":{"type":"string","enum":["Governing Law","Non-Compete","Cap On Liability","Termination For Convenience","Exclusivity"]},
 "present":{"type":"boolean"},"risk":{"type":"string","enum":["low","medium","high"]},
 "rationale":{"type":"string","maxLength":200},
 "quotes":{"type":"array","items":{"type":"string","maxLength":80},"maxItems":3}},
 "required":["category","present","risk","rationale","quotes"]})";

double ms(Clock::duration d)
{
    return std::chrono::duration<double, std::milli>(d).count();
}

// CPU time of this process in ms: the machine is shared, so wall time overstates the cost.
double cpuMs()
{
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

// Feeds text through the vocabulary's single-byte tokens.
bool feed(GrammarConstraint& c, const TokenVocabulary& v, const std::string& text)
{
    for (unsigned char b : text) {
        int32_t id = -1;
        for (int32_t t = 0; t < v.size() && id < 0; ++t)
            if (!v.isSpecial(t) && v.bytes(t).size() == 1
                && static_cast<unsigned char>(v.bytes(t)[0]) == b)
                id = t;
        if (id < 0 || !c.accept(id).ok())
            return false;
    }
    return true;
}

} // namespace

int main(int argc, char** argv)
{
    const std::string path = argc > 1 ? argv[1] : CW_TEST_DATA_DIR "/sampling/qwen3_vocab.bin.xz";
    const int repeats = argc > 2 ? std::max(1, std::atoi(argv[2])) : 20;
    auto t0 = Clock::now();
    auto vocab = test::loadQwen3Vocabulary(path);
    if (!vocab) {
        std::fprintf(stderr, "%s\n", vocab.error().message.c_str());
        return 1;
    }
    std::printf("vocabulary: %d ids, trie %zu nodes, longest token %zu bytes, load+trie %.1f ms\n",
        (*vocab)->size(), (*vocab)->nodes().size(), (*vocab)->maxTokenBytes(),
        ms(Clock::now() - t0));

    struct State {
        const char* name;
        std::string prefix;
    };
    const std::vector<State> states = {
        { "object start", "" },
        { "inside enum value", "{\"category\": \"Term" },
        { "free text string (worst case)",
            "{\"category\":\"Exclusivity\",\"present\":true,\"risk\":\"low\",\"rationale\":\"The "
            "supplier shall" },
        { "array of strings, after a comma",
            "{\"category\":\"Exclusivity\",\"present\":true,\"risk\":\"low\",\"rationale\":\"x\","
            "\"quotes\":[\"a\", " },
        { "complete (EOS only)",
            "{\"category\":\"Exclusivity\",\"present\":true,\"risk\":\"low\",\"rationale\":\"\","
            "\"quotes\":[]}" },
    };
    TokenMask mask;
    for (const State& s : states) {
        auto c = GrammarConstraint::fromJsonSchema(kSchema, *vocab);
        if (!c || !feed(*c, **vocab, s.prefix)) {
            std::fprintf(stderr, "cannot reach state '%s'\n", s.name);
            return 1;
        }
        std::vector<double> times, cpu;
        for (int i = 0; i < repeats; ++i) {
            auto a = Clock::now();
            const double c0 = cpuMs();
            c->computeMask(mask);
            cpu.push_back(cpuMs() - c0);
            times.push_back(ms(Clock::now() - a));
        }
        std::sort(times.begin(), times.end());
        std::sort(cpu.begin(), cpu.end());
        std::printf(
            "mask %-34s allowed %6d  wall median %8.3f ms  cpu median %8.3f ms min %8.3f ms\n",
            s.name, mask.count(), times[times.size() / 2], cpu[cpu.size() / 2], cpu.front());
    }

    // End to end: 20 constrained generations with random logits (the unconstrained choice
    // first; when the grammar rejects it, a sampled step masks the row, a greedy one checks
    // the next best 64 before it does), sampled at the default temperature and greedy.
    for (const bool greedy : { false, true }) {
        int tokens = 0;
        auto e0 = Clock::now();
        const double cpu0 = cpuMs();
        double logitsMs = 0;
        for (uint64_t seed = 0; seed < 20; ++seed) {
            auto c = GrammarConstraint::fromJsonSchema(kSchema, *vocab);
            SamplingParams p;
            p.seed = seed;
            if (greedy)
                p.temperature = 0.0f;
            Sampler sampler(p);
            Rng model(seed ^ 0x5eedull);
            std::vector<float> logits(static_cast<size_t>((*vocab)->size()));
            std::vector<int32_t> out;
            for (int step = 0; step < 4000; ++step) {
                auto l0 = Clock::now();
                for (float& l : logits)
                    l = static_cast<float>(model.uniform() * 8.0);
                logitsMs += ms(Clock::now() - l0);
                auto id = sampler.sample(logits, {}, out, &*c);
                if (!id || !c->accept(*id).ok())
                    return 1;
                out.push_back(*id);
                ++tokens;
                if ((*vocab)->isEos(*id))
                    break;
            }
        }
        const double total = ms(Clock::now() - e0) - logitsMs;
        const double cpuTotal = cpuMs() - cpu0;
        std::printf("constrained sampling (%s), random logits: %d tokens in 20 runs, wall %.3f ms "
                    "per token (random logit generation excluded), cpu %.3f ms per token "
                    "(included)\n",
            greedy ? "greedy" : "sampled", tokens, total / tokens, cpuTotal / tokens);
    }
    return 0;
}
