// `clausewright-cli devices`: the processors the engine can run on.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "kernels/compute_devices.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>

namespace {

int runDevices(std::span<char*> args)
{
    CLI::App app{"List the CPU and CUDA devices the engine can run on", "devices"};
    cw::cli::showDefaultsInHelp(app);
    bool asJson = false;
    app.add_flag("--json", asJson, "print JSON");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    const auto devices = cw::kernels::listComputeDevices();
    if (asJson) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& d : devices) {
            list.push_back({{"kind", d.kind == cw::kernels::DeviceKind::Cuda ? "cuda" : "cpu"},
                            {"index", d.index},
                            {"name", d.name},
                            {"memory_bytes", d.memoryBytes},
                            {"compute_units", d.computeUnits},
                            {"capability", d.capability}});
        }
        std::printf("%s\n", list.dump(2).c_str());
        return 0;
    }
    for (const auto& d : devices) {
        const bool gpu = d.kind == cw::kernels::DeviceKind::Cuda;
        std::printf("%s%s  %s  %.1f GiB  %d %s  %s\n", gpu ? "cuda:" : "cpu",
                    gpu ? std::to_string(d.index).c_str() : "", d.name.c_str(),
                    double(d.memoryBytes) / (1024.0 * 1024.0 * 1024.0), d.computeUnits,
                    gpu ? "SMs" : "threads", d.capability.c_str());
    }
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration{
    {"devices", "list the CPU and CUDA devices the engine can run on", runDevices}};

} // namespace
