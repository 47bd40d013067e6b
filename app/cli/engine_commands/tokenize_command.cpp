// `clausewright-cli tokenize --model PATH (--text S | --file F)`: the token ids of a text
// as a JSON array. PATH: a GGUF file, a model folder or a bare tokenizer.json.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "engine/tokenizer/tokenizer.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace {

int runTokenize(std::span<char*> args)
{
    CLI::App app { "Print the token ids of a text as a JSON array", "tokenize" };
    cw::cli::showDefaultsInHelp(app);
    std::string model, text, file;
    app.add_option("--model", model, "GGUF file, model folder or tokenizer.json")->required();
    auto* textOption = app.add_option("--text", text, "the text to tokenize");
    auto* fileOption = app.add_option("--file", file, "a UTF-8 file to tokenize");
    textOption->excludes(fileOption);
    try {
        app.parse(int(args.size()), args.data());
        if (!*textOption && !*fileOption)
            throw CLI::RequiredError("--text or --file");
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    if (*fileOption) {
        std::ifstream in(file, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "error: %s: cannot open the file\n", file.c_str());
            return 1;
        }
        std::ostringstream buffer;
        buffer << in.rdbuf();
        text = buffer.str();
    }
    auto tokenizer = cw::engine::openTokenizer(model);
    if (!tokenizer) {
        std::fprintf(stderr, "error: %s\n", tokenizer.error().message.c_str());
        return 1;
    }
    const nlohmann::json ids = tokenizer->encode(text);
    std::printf("%s\n", ids.dump().c_str());
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "tokenize",
    "print the token ids of a text (JSON array)", runTokenize } };

} // namespace
