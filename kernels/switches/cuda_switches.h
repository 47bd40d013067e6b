#pragma once

// The CW_CUDA_* environment switches, in one place: A/B knobs for benchmarks and diagnosis on
// a user's card, read once per process by the kernels that take them. Every variable of the
// environment whose name starts with CW_CUDA_ must be one of these with one of its values,
// else the CUDA backend refuses to start naming it (a typo must not silently measure the
// default). kernels/cuda/PERFORMANCE.md's table is this list (checked by a test), and
// `bench` records the switches that are set in its JSON.
//
// Plain C++ (no CUDA): CPU-only builds check and list them too.

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace cw::kernels {

// Whether this build has the benchmark-only switches (CW_CUDA_SKIP).
bool benchmarkSwitchesBuiltIn();

// Checks every CW_CUDA_ variable of `environment` ("NAME=value" strings): the first unknown
// name, value outside its switch's values, or benchmark-only switch in a build without them,
// as a message for a person; nullopt when all are good.
std::optional<std::string> cudaSwitchError(std::span<const std::string> environment);
std::optional<std::string> cudaSwitchErrorInThisProcess();

// The switches set in this process (name, value), in the table's order; for bench's JSON.
std::vector<std::pair<std::string, std::string>> cudaSwitchesSet();

// The Markdown table of kernels/cuda/PERFORMANCE.md, from the list in cuda_switches.cpp.
std::string cudaSwitchTable();

} // namespace cw::kernels
