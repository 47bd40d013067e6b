#include "app/cli/cli_command.h"

#include <algorithm>

namespace cw::cli {
namespace {
std::vector<CliCommand>& mutableCommands()
{
    static std::vector<CliCommand> commands; // function-local: safe during static init
    return commands;
}
} // namespace

const std::vector<CliCommand>& registeredCommands()
{
    auto& commands = mutableCommands();
    std::sort(commands.begin(), commands.end(),
              [](const CliCommand& a, const CliCommand& b) { return a.name < b.name; });
    return commands;
}

CliCommandRegistration::CliCommandRegistration(CliCommand command)
{
    mutableCommands().push_back(command);
}

} // namespace cw::cli
