#include "kernels/switches/cuda_switches.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <unistd.h>

namespace cw::kernels {

namespace {

struct CudaSwitch {
    enum class Values {
        Choice, // one of `values`, separated by '|'
        List, // a comma-separated subset of `values`
        Count, // a whole number, 0 or more
        Any, // read by the build, not checked here
    };
    std::string_view name;
    Values kind;
    std::string_view values; // Choice and List: "a|b|c"; otherwise how the table shows it
    std::string_view effect; // the table's text (Markdown)
    bool benchmarkBuildOnly = false; // compiled in with -DCW_BENCHMARK_SWITCHES=ON only
};

using Values = CudaSwitch::Values;

constexpr std::string_view kPrefix = "CW_CUDA_";

const CudaSwitch kSwitches[] = {
    { "CW_CUDA_PROFILE_STEP", Values::Count, "N",
        "brackets the N-th forward step with cudaProfilerStart/Stop, for `ncu "
        "--profile-from-start off` (`tests/gpu/ncu_summary.py` sums the log per kernel; "
        "`run_on_device.sh profile` does both)" },
    { "CW_CUDA_SKIP", Values::List, "attention|deltanet|routed|shared|norm",
        "leaves those op families out of every step (comma-separated), to time each inside a "
        "replayed graph (tokens meaningless, finite check off); benchmark builds only "
        "(`-DCW_BENCHMARK_SWITCHES=ON`)",
        true },
    { "CW_CUDA_CHAINED", Values::Choice, "0|1",
        "`0`: plain launches instead of programmatic dependent launch (default `1` where the "
        "card has it)" },
    { "CW_CUDA_MATVEC", Values::Choice, "simt|mma|int8",
        "pins the mat-vec kernel family (simt and mma turn the integer products off); unset: "
        "chosen per call" },
    { "CW_CUDA_INTMV", Values::Choice, "block|warp|warp2|staged",
        "the one-token integer mat-vec's layout: a block per row, a warp per row, a warp per "
        "two rows, a warp per row staged in shared memory before the wait (default; rows not "
        "4-byte aligned or over 8 KB take the warp rows)" },
    { "CW_CUDA_INTMM", Values::Count, "0|1|N",
        "which products of 9..64 token rows take the int8 tensor-core products instead of "
        "dequantized bf16 + cuBLAS: by default matrices of 65,536 rows and more, i.e. the LM "
        "head (up to 64 rows a pass; +8 % at 32 sequences); `1` every matrix (slower at 32 "
        "sequences), `0` none, `N` matrices of N rows and more (8,192: 1,786 tok/s at 32 "
        "sequences, 4,096: 1,718, against 1,882 at the default; "
        "tests/bench/results/2026-12-03-h200-intmm-rows-ab.jsonl)" },
    { "CW_CUDA_MOE", Values::Choice, "direct|integer",
        "`direct`: the f32 expert kernels instead of the integer ones at decode sizes "
        "(default `integer`, where the experts' types allow)" },
    { "CW_CUDA_EXPERTS", Values::Choice, "inplace|staged|host|split|halves",
        "with routed experts in host memory (`--gpu-memory` under the model's size): the GPU "
        "reads them in place over PCIe; prefill steps copy them to the GPU first (`staged`); "
        "decode steps have the CPU compute all of them beside the GPU (`host`); `split`: the "
        "cost model's choice per layer and of each token's share for the CPU, untimed; "
        "`halves`: half of each token's host choices on the CPU (tests: both sides at once); unset: the cost model chooses per layer and step, "
        "and each decode batch size's first steps time its host views against none, keeping "
        "the faster (`engine/backend/cuda/decode_view_trial.h`)" },
    { "CW_CUDA_EXACT_ATTENTION", Values::Choice, "0|1",
        "`1`: f32 prefill attention under the bf16 and tf32 precisions" },
    { "CW_CUDA_ARCHITECTURES", Values::Any, "90, 80;86;89;90 ...",
        "not a run-time switch: the CUDA architectures `installer/dev.sh` and `.ci/run` build "
        "for (CMake's CMAKE_CUDA_ARCHITECTURES)" },
};

std::vector<std::string_view> split(std::string_view text, char separator)
{
    std::vector<std::string_view> parts;
    while (true) {
        const auto at = text.find(separator);
        parts.push_back(text.substr(0, at));
        if (at == std::string_view::npos)
            return parts;
        text.remove_prefix(at + 1);
    }
}

bool isCount(std::string_view value)
{
    return !value.empty() && value.size() <= 18
        && std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
}

const CudaSwitch* find(std::string_view name)
{
    for (const CudaSwitch& s : kSwitches) {
        if (s.name == name)
            return &s;
    }
    return nullptr;
}

std::string choices(const CudaSwitch& s)
{
    std::string out;
    for (std::string_view choice : split(s.values, '|'))
        out += (out.empty() ? "" : ", ") + std::string(choice);
    return out;
}

std::optional<std::string> valueError(const CudaSwitch& s, std::string_view value)
{
    const std::string where = std::string(s.name) + "=" + std::string(value) + ": ";
    switch (s.kind) {
    case Values::Any:
        return std::nullopt;
    case Values::Count:
        if (isCount(value))
            return std::nullopt;
        return where + "must be a whole number, 0 or more";
    case Values::Choice: {
        const auto options = split(s.values, '|');
        if (std::find(options.begin(), options.end(), value) != options.end())
            return std::nullopt;
        return where + "must be one of " + choices(s);
    }
    case Values::List: {
        const auto options = split(s.values, '|');
        for (std::string_view item : split(value, ',')) {
            if (std::find(options.begin(), options.end(), item) == options.end())
                return where + "'" + std::string(item) + "' is not one of its parts; give some of "
                    + choices(s) + ", separated by commas";
        }
        return std::nullopt;
    }
    }
    return std::nullopt;
}

} // namespace

bool benchmarkSwitchesBuiltIn()
{
#if defined(CW_BENCHMARK_SWITCHES)
    return true;
#else
    return false;
#endif
}

std::optional<std::string> cudaSwitchError(std::span<const std::string> environment)
{
    for (const std::string& entry : environment) {
        if (std::string_view(entry).substr(0, kPrefix.size()) != kPrefix)
            continue;
        const auto equals = entry.find('=');
        const std::string_view name = std::string_view(entry).substr(0, equals);
        const std::string_view value = equals == std::string::npos
            ? std::string_view()
            : std::string_view(entry).substr(equals + 1);
        const CudaSwitch* s = find(name);
        if (!s) {
            std::string known;
            for (const CudaSwitch& k : kSwitches) {
                if (k.kind != Values::Any)
                    known += (known.empty() ? "" : ", ") + std::string(k.name);
            }
            return std::string(name) + " is not a switch of this engine (they are " + known
                + "; kernels/cuda/PERFORMANCE.md says what each does); unset it";
        }
        if (s->benchmarkBuildOnly && !benchmarkSwitchesBuiltIn())
            return std::string(name)
                + " is compiled into benchmark builds only (cmake -DCW_BENCHMARK_SWITCHES=ON); "
                  "unset it";
        if (auto bad = valueError(*s, value))
            return bad;
    }
    return std::nullopt;
}

std::optional<std::string> cudaSwitchErrorInThisProcess()
{
    std::vector<std::string> environment;
    for (char** entry = environ; entry && *entry; ++entry)
        environment.emplace_back(*entry);
    return cudaSwitchError(environment);
}

std::vector<std::pair<std::string, std::string>> cudaSwitchesSet()
{
    std::vector<std::pair<std::string, std::string>> set;
    for (const CudaSwitch& s : kSwitches) {
        if (s.kind == Values::Any)
            continue;
        if (const char* value = std::getenv(std::string(s.name).c_str()))
            set.emplace_back(std::string(s.name), value);
    }
    return set;
}

std::string cudaSwitchTable()
{
    std::string table = "| variable | values | effect |\n| --- | --- | --- |\n";
    for (const CudaSwitch& s : kSwitches) {
        std::string values; // '|' would end a Markdown cell
        for (char c : s.values)
            values += c == '|' ? std::string("\\|") : std::string(1, c);
        table += "| `" + std::string(s.name) + "` | " + values + " | " + std::string(s.effect)
            + " |\n";
    }
    return table;
}

} // namespace cw::kernels
