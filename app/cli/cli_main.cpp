// clausewright-cli: the headless entry point. Dispatches to registered sub-commands.
#include "app/cli/cli_command.h"

#include <cstdio>
#include <cstring>
#include <string_view>

#ifndef CW_VERSION
#define CW_VERSION "0"
#endif

namespace {

void printUsage(std::FILE* out)
{
    std::fprintf(out,
                 "Clausewright %s - local contract review and test generation\n\n"
                 "Usage: clausewright-cli <command> [options]\n"
                 "       clausewright-cli <command> --help\n\n"
                 "Commands:\n",
                 CW_VERSION);
    for (const auto& command : cw::cli::registeredCommands()) {
        std::fprintf(out, "  %-14.*s %.*s\n", int(command.name.size()), command.name.data(),
                     int(command.summary.size()), command.summary.data());
    }
    std::fprintf(out, "\nOptions:\n  -h, --help     show this help\n  --version      show the version\n");
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        printUsage(stderr);
        return 2;
    }
    const std::string_view first = argv[1];
    if (first == "-h" || first == "--help" || first == "help") {
        printUsage(stdout);
        return 0;
    }
    if (first == "--version") {
        std::printf("clausewright-cli %s\n", CW_VERSION);
        return 0;
    }
    for (const auto& command : cw::cli::registeredCommands()) {
        if (command.name == first) {
            return command.run(std::span<char*>(argv + 1, std::size_t(argc - 1)));
        }
    }
    std::fprintf(stderr, "clausewright-cli: unknown command '%s' (see clausewright-cli --help)\n",
                 argv[1]);
    return 2;
}
