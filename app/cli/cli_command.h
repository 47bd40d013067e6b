#pragma once

#include <span>
#include <string_view>
#include <vector>

namespace cw::cli {

// One sub-command of clausewright-cli. Each command lives in its own file under
// engine_commands/ (no Qt) or app_commands/ (Qt) and registers itself with a
// static CliCommandRegistration, so adding a command touches no shared list.
struct CliCommand {
    std::string_view name;
    std::string_view summary;
    // args[0] is the command name; returns the process exit code.
    int (*run)(std::span<char*> args);
};

const std::vector<CliCommand>& registeredCommands();

struct CliCommandRegistration {
    explicit CliCommandRegistration(CliCommand command);
};

} // namespace cw::cli
