#pragma once

// How every sub-command ends when its command line cannot be parsed.
#include <CLI/CLI.hpp>

namespace cw::cli {

// The exit status of a command line that does not parse: CLI11 prints the message (or the
// help, for --help) and would return its own codes (105, 106, ...); scripts and users expect
// 2 for a usage error, as getopt programs give, and 0 for --help.
inline int usageExit(const CLI::App& app, const CLI::ParseError& error)
{
    return app.exit(error) == 0 ? 0 : 2;
}

// Makes --help show each option's default value ("[fast]") for the options added after it.
inline void showDefaultsInHelp(CLI::App& app)
{
    app.option_defaults()->always_capture_default();
}

// --gpu-memory GIB: the GPU memory the model may take (engine::ModelOptions::gpuMemoryGiB).
inline CLI::Option* addGpuMemoryOption(CLI::App& app, double& gib)
{
    return app
        .add_option("--gpu-memory", gib,
            "GiB of GPU memory the model may take (0: the card's free memory); a model over it "
            "keeps its least chosen experts in host memory")
        ->check(CLI::Range(0.0, 1e6));
}

} // namespace cw::cli
