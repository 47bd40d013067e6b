// Encodes 1 MiB of English legal text (tests/data/tokenizer/cuad_contracts_1mib.txt.xz)
// with the Qwen3 tokenizer on one thread and prints the time: first with an empty piece
// cache (a fresh tokenizer), then warm. Run: build/tests/bench/tokenizer/tokenizer_bench
#include "engine/tokenizer/tokenizer.h"
#include "xz_test_data.h"

#include <chrono>
#include <cstdio>

namespace {

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main()
{
    const std::string data = std::string(CW_TEST_DATA_DIR) + "/tokenizer/";
    auto text = cw::test::readXzFile(data + "cuad_contracts_1mib.txt.xz");
    auto json = cw::test::unpackXzFile(data + "qwen3_tokenizer.json.xz",
        std::string(CW_TEST_BINARY_DIR) + "/qwen3_tokenizer.json");
    if (!text || !json) {
        std::fprintf(stderr, "error: %s\n", (!text ? text.error() : json.error()).message.c_str());
        return 1;
    }
    auto start = std::chrono::steady_clock::now();
    auto tokenizer = cw::engine::loadTokenizerJson(*json, data + "qwen3_tokenizer_config.json");
    if (!tokenizer) {
        std::fprintf(stderr, "error: %s\n", tokenizer.error().message.c_str());
        return 1;
    }
    std::printf("load tokenizer.json (11 MB): %.3f s\n", secondsSince(start));

    const double mib = double(text->size()) / (1024.0 * 1024.0);
    start = std::chrono::steady_clock::now();
    const auto ids = tokenizer->encode(*text);
    const double cold = secondsSince(start);
    std::printf("encode %.2f MiB, cold cache: %.3f s (%zu tokens, %.2f MiB/s)\n", mib, cold,
        ids.size(), mib / cold);
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
        start = std::chrono::steady_clock::now();
        const auto again = tokenizer->encode(*text);
        best = std::min(best, secondsSince(start));
        if (again != ids) {
            std::fprintf(stderr, "error: encoding differs between runs\n");
            return 1;
        }
    }
    std::printf(
        "encode %.2f MiB, warm cache: %.3f s (best of 3, %.2f MiB/s)\n", mib, best, mib / best);
    start = std::chrono::steady_clock::now();
    const std::string decoded = tokenizer->decode(ids);
    std::printf("decode: %.3f s, round trip %s\n", secondsSince(start),
        decoded == *text ? "exact" : "DIFFERS");
    return decoded == *text ? 0 : 1;
}
