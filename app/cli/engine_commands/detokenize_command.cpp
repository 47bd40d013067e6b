// `clausewright-cli detokenize --model PATH --ids 1,2,3`: the text of token ids.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "engine/tokenizer/tokenizer.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>

namespace {

// "1,2,3" or "[1, 2, 3]" (the output of tokenize) into ids; an error names the bad item.
cw::Result<std::vector<std::int32_t>> parseIds(const std::string& text)
{
    std::vector<std::int32_t> ids;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const std::size_t end = text.find(',', pos);
        std::string item
            = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        const auto first = item.find_first_not_of(" \t\n[]");
        const auto last = item.find_last_not_of(" \t\n[]");
        item = first == std::string::npos ? std::string() : item.substr(first, last - first + 1);
        if (!item.empty()) {
            std::int32_t id = 0;
            const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), id);
            if (ec != std::errc() || ptr != item.data() + item.size() || id < 0)
                return cw::makeError("--ids: \"" + item + "\" is not a token id");
            ids.push_back(id);
        }
        if (end == std::string::npos)
            break;
        pos = end + 1;
    }
    return ids;
}

int runDetokenize(std::span<char*> args)
{
    CLI::App app { "Print the text of token ids", "detokenize" };
    cw::cli::showDefaultsInHelp(app);
    std::string model, idsText;
    bool skipSpecial = false;
    app.add_option("--model", model, "GGUF file, model folder or tokenizer.json")->required();
    app.add_option("--ids", idsText, "comma-separated token ids, e.g. 1,2,3")->required();
    app.add_flag("--skip-special", skipSpecial, "leave out special tokens");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    auto ids = parseIds(idsText);
    if (!ids) {
        std::fprintf(stderr, "error: %s\n", ids.error().message.c_str());
        return 1;
    }
    auto tokenizer = cw::engine::openTokenizer(model);
    if (!tokenizer) {
        std::fprintf(stderr, "error: %s\n", tokenizer.error().message.c_str());
        return 1;
    }
    for (const std::int32_t id : *ids) {
        if (!tokenizer->isValidId(id)) {
            std::fprintf(stderr, "error: --ids: %d is outside the vocabulary (size %d)\n", id,
                tokenizer->vocabSize());
            return 1;
        }
    }
    const std::string text = tokenizer->decode(*ids, skipSpecial);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "detokenize", "print the text of token ids",
    runDetokenize } };

} // namespace
