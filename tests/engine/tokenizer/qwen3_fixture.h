#pragma once

#include "engine/tokenizer/tokenizer.h"
#include "xz_test_data.h"

#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <nlohmann/json.hpp>

namespace cw::test {

inline std::string tokenizerDataDir()
{
    return std::string(CW_TEST_DATA_DIR) + "/tokenizer/";
}

// The real Qwen3 tokenizer, unpacked once into the build folder and loaded once.
inline const std::string& qwen3TokenizerJsonPath()
{
    static const std::string path = [] {
        auto unpacked = unpackXzFile(tokenizerDataDir() + "qwen3_tokenizer.json.xz",
            std::string(CW_TEST_BINARY_DIR) + "/qwen3_tokenizer.json");
        if (!unpacked) {
            ADD_FAILURE() << unpacked.error().message;
            return std::string();
        }
        return unpacked.value();
    }();
    return path;
}

inline const engine::Tokenizer& qwen3Tokenizer()
{
    static const std::unique_ptr<engine::Tokenizer> tokenizer = [] {
        auto loaded = engine::loadTokenizerJson(
            qwen3TokenizerJsonPath(), tokenizerDataDir() + "qwen3_tokenizer_config.json");
        if (!loaded) {
            ADD_FAILURE() << loaded.error().message;
            std::abort();
        }
        return std::make_unique<engine::Tokenizer>(std::move(loaded.value()));
    }();
    return *tokenizer;
}

inline const nlohmann::json& qwen3Reference()
{
    static const nlohmann::json reference = [] {
        std::ifstream in(tokenizerDataDir() + "qwen3_reference.json");
        return nlohmann::json::parse(in);
    }();
    return reference;
}

} // namespace cw::test
