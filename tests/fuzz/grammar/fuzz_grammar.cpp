// Fuzzes the GBNF parser, the grammar matcher and the JSON-schema converter. The first byte
// picks the target: even - the rest is GBNF text (then, when it parses, the text after a
// NUL byte is fed to the matcher); odd - the rest is a JSON schema, and a converted grammar
// must always parse.
#include "engine/sampling/grammar.h"
#include "engine/sampling/grammar_matcher.h"
#include "engine/sampling/json_schema_grammar.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace cw::sampling;
    if (size < 1 || size > 4096)
        return 0;
    const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
    // Repetition counts and lengths of 1000 and more only make inputs slow (the limits are
    // tested in the unit tests): skip numbers of four or more digits.
    for (size_t i = 0, run = 0; i < rest.size(); ++i) {
        run = (rest[i] >= '0' && rest[i] <= '9') ? run + 1 : 0;
        if (run >= 4)
            return 0;
    }
    if ((data[0] & 1) == 0) {
        const size_t nul = rest.find('\0');
        const std::string_view text = rest.substr(0, nul);
        auto g = Grammar::parse(text);
        if (!g)
            return 0;
        (void)g->toString();
        if (nul != std::string_view::npos && g->ruleCount() < 200) {
            GrammarMatcher m(std::make_shared<const Grammar>(std::move(*g)));
            const std::string_view input = rest.substr(nul + 1, 64);
            for (size_t i = 0; i < input.size(); ++i)
                if (!m.accept(input.substr(i, 1)))
                    break;
            (void)m.isComplete();
        }
        return 0;
    }
    auto gbnf = jsonSchemaToGbnf(rest);
    if (!gbnf)
        return 0;
    auto g = Grammar::parse(*gbnf);
    if (!g) {
        std::fprintf(stderr, "converted schema does not parse: %s\n%s\n", g.error().message.c_str(),
            gbnf->c_str());
        std::abort();
    }
    return 0;
}
