// Runs `clausewright-cli inspect` on tiny GGUF models written by the test and checks the JSON
// against figures worked out by hand from the tiny geometry (tiny_gguf_model.h).
#include "app/cli/cli_command.h"
#include "tiny_gguf_model.h"

#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

// Runs the registered "inspect" command with stdout and stderr sent to a file; returns the
// exit code and what it printed.
std::pair<int, std::string> runInspect(std::vector<std::string> args)
{
    const cw::cli::CliCommand* command = nullptr;
    for (const auto& c : cw::cli::registeredCommands()) {
        if (c.name == "inspect")
            command = &c;
    }
    EXPECT_NE(command, nullptr);
    if (!command)
        return { -1, {} };
    args.insert(args.begin(), "inspect");
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    const std::string capture
        = (std::filesystem::temp_directory_path() / "cw_inspect_out.txt").string();
    std::fflush(stdout);
    std::fflush(stderr);
    const int savedOut = ::dup(1), savedErr = ::dup(2);
    const int fd = ::open(capture.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    const int rc = command->run(std::span<char*>(argv.data(), argv.size()));
    std::fflush(stdout);
    std::fflush(stderr);
    ::dup2(savedOut, 1);
    ::dup2(savedErr, 2);
    ::close(fd);
    ::close(savedOut);
    ::close(savedErr);
    std::ifstream in(capture);
    std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::remove(capture.c_str());
    return { rc, out };
}

nlohmann::json inspect(
    const std::string& model, const std::string& context, const std::string& batch)
{
    const auto [rc, out] = runInspect({ "--model", model, "--context", context, "--batch", batch });
    EXPECT_EQ(rc, 0) << out;
    auto json = nlohmann::json::parse(out, nullptr, false);
    EXPECT_FALSE(json.is_discarded()) << out;
    return json;
}

std::string tempPath(const std::string& name)
{
    return (std::filesystem::temp_directory_path() / ("cw_inspect_" + name + ".gguf")).string();
}

} // namespace

TEST(InspectCommand, countsParametersAndKvCacheOfQwen3Moe)
{
    cw::test::TinyGgufOptions o;
    o.architecture = "qwen3moe";
    const std::string path = tempPath("qwen3moe");
    ASSERT_TRUE(cw::test::writeTinyGguf(path, o).ok());
    const auto j = inspect(path, "1000", "2");
    std::remove(path.c_str());
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j["architecture"], "qwen3moe");
    EXPECT_EQ(j["format"], "gguf");
    EXPECT_EQ(j["context_length"], 4096);
    // Per layer: norms 64+64, q 4096, k 2048, v 2048, o 4096, q/k norms 16+16, router 256 =
    // 12704; routed experts 3 x 64 x 32 x 4 = 24576. Embedding and output 8192 each, output
    // norm 64.
    const auto& p = j["parameters"];
    EXPECT_EQ(p["total"], 165568);
    EXPECT_EQ(p["routed_experts"], 98304);
    EXPECT_EQ(p["active_per_token"], 4 * 12704 + 64 + 16384 + 98304 / 2);
    EXPECT_EQ(p["active_per_token_without_embeddings"], 4 * 12704 + 64 + 98304 / 2);
    const auto& m = j["memory"];
    EXPECT_EQ(m["weights_bytes"], 165568 * 4);
    EXPECT_EQ(m["attention_layers"], 4);
    EXPECT_EQ(m["kv_cache_bytes_per_token"], 4 * 2 * 32 * 4); // layers x K,V x kv dim x f32
    EXPECT_EQ(m["kv_cache_bytes"], 1024 * 1000 * 2);
    EXPECT_EQ(m["deltanet_recurrent_state_bytes"], 0);
    ASSERT_EQ(j["quantization"].size(), 1u);
    EXPECT_EQ(j["quantization"][0]["type"], "f32");
    EXPECT_EQ(j["quantization"][0]["tensors"], 51);
    EXPECT_EQ(j["tensors"]["count"], 51);
    bool foundGroup = false;
    for (const auto& g : j["tensors"]["groups"]) {
        if (g["name"] == "blk.*.ffn_gate_exps.weight") {
            foundGroup = true;
            EXPECT_EQ(g["count"], 4);
            EXPECT_EQ(g["shapes"][0], nlohmann::json({ 64, 32, 4 }));
        }
    }
    EXPECT_TRUE(foundGroup);
}

TEST(InspectCommand, countsDeltaNetStateAndQuantizationMixOfQwen35Moe)
{
    cw::test::TinyGgufOptions o;
    o.mix = "q8_0";
    const std::string path = tempPath("qwen35moe");
    ASSERT_TRUE(cw::test::writeTinyGguf(path, o).ok());
    const auto j = inspect(path, "1000", "2");
    std::remove(path.c_str());
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j["architecture"], "qwen35moe");
    EXPECT_EQ(j["hyperparameters"]["layer_kinds"], "DDDA");
    EXPECT_EQ(j["hyperparameters"]["mtp_layers"], 1);
    const auto& m = j["memory"];
    EXPECT_EQ(m["attention_layers"], 1);
    EXPECT_EQ(m["deltanet_layers"], 3);
    EXPECT_EQ(m["kv_cache_bytes"], 1 * 2 * 32 * 4 * 1000 * 2);
    // 3 layers x 4 value heads x 16 x 16 floats x 2 sequences; conv: 3 x (4-1) x 128 channels.
    EXPECT_EQ(m["deltanet_recurrent_state_bytes"], 3 * 4 * 16 * 16 * 4 * 2);
    EXPECT_EQ(m["deltanet_conv_state_bytes"], 3 * 3 * 128 * 4 * 2);
    std::int64_t tensors = 0;
    bool hasQ8 = false;
    for (const auto& q : j["quantization"]) {
        tensors += q["tensors"].get<std::int64_t>();
        hasQ8 = hasQ8 || q["type"] == "q8_0";
    }
    EXPECT_TRUE(hasQ8);
    EXPECT_EQ(tensors, j["tensors"]["count"].get<std::int64_t>());
    EXPECT_GT(j["parameters"]["mtp_block"].get<std::int64_t>(), 0);
}

TEST(InspectCommand, reportsAnUnreadableModel)
{
    const auto [rc, out] = runInspect({ "--model", "/nonexistent.gguf" });
    EXPECT_NE(rc, 0);
    EXPECT_NE(out.find("/nonexistent.gguf"), std::string::npos) << out;
}

TEST(InspectCommand, takesThePathAsItsArgument)
{
    const std::string path = tempPath("positional");
    ASSERT_TRUE(cw::test::writeTinyGguf(path).ok());
    const auto [rc, out] = runInspect({ path });
    std::remove(path.c_str());
    ASSERT_EQ(rc, 0) << out;
    const auto json = nlohmann::json::parse(out, nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << out;
    EXPECT_EQ(json["path"], path);
}

TEST(InspectCommand, usageErrorsExitWithTwo)
{
    // No model at all, an unknown option, a value out of range: 2, as getopt programs exit.
    EXPECT_EQ(runInspect({}).first, 2);
    EXPECT_EQ(runInspect({ "--no-such-option" }).first, 2);
    EXPECT_EQ(runInspect({ "--model", "x.gguf", "--kv-bytes", "3" }).first, 2);
    EXPECT_EQ(runInspect({ "--help" }).first, 0);
}
