#include "engine/model_files/safetensors_file.h"
#include "engine/model_files/safetensors_model_files.h"
#include "engine/model_files/safetensors_writer.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

namespace fs = std::filesystem;
using namespace cw::engine;

namespace {

// A safetensors buffer with the given header text and `dataBytes` zero bytes of data.
std::vector<std::byte> rawFile(
    const std::string& header, std::size_t dataBytes, std::uint64_t lengthField = UINT64_MAX)
{
    const std::uint64_t length = lengthField == UINT64_MAX ? header.size() : lengthField;
    std::vector<std::byte> bytes(8 + header.size() + dataBytes);
    for (int i = 0; i < 8; ++i)
        bytes[std::size_t(i)] = std::byte((length >> (8 * i)) & 0xff);
    std::memcpy(bytes.data() + 8, header.data(), header.size());
    return bytes;
}

std::string parseError(const std::vector<std::byte>& bytes)
{
    auto header = parseSafetensorsHeader(bytes.data(), bytes.size(), "/x/model.safetensors");
    return header ? std::string() : header.error().message;
}

fs::path scratch(const std::string& name)
{
    const fs::path dir = fs::path(CW_TEST_BINARY_DIR) / "safetensors_scratch" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

void writeText(const fs::path& path, const std::string& text)
{
    std::ofstream(path, std::ios::binary) << text;
}

} // namespace

TEST(Safetensors, readsWhatTheWriterWrote)
{
    SafetensorsWriter writer;
    writer.addFloats("a", TensorType::F32, { 2, 3 }, { 1, 2, 3, 4, 5, 6 });
    writer.addFloats("b", TensorType::BF16, { 4 }, { 1.0f, -2.0f, 0.5f, 3.0f });
    writer.addFloats("c", TensorType::F16, { 2 }, { 0.25f, -65504.0f });
    writer.setMetadata("format", "pt");
    const auto dir = scratch("roundtrip");
    ASSERT_TRUE(writer.write((dir / "model.safetensors").string()));

    auto file = SafetensorsFile::open((dir / "model.safetensors").string());
    ASSERT_TRUE(file) << file.error().message;
    ASSERT_EQ(file->tensors().size(), 3u);
    EXPECT_EQ(file->metadata().at("format"), "pt");
    const auto* a = file->find("a");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->shape, (std::vector<std::int64_t> { 2, 3 }));
    EXPECT_EQ(a->type, TensorType::F32);
    float values[6];
    std::memcpy(values, a->data, sizeof values);
    EXPECT_EQ(values[5], 6.0f);
    const auto* b = file->find("b");
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->type, TensorType::BF16);
    std::uint16_t bits[4];
    std::memcpy(bits, b->data, sizeof bits);
    EXPECT_EQ(bits[1], 0xc000); // -2.0 in bf16
    const auto* c = file->find("c");
    ASSERT_NE(c, nullptr);
    std::uint16_t half[2];
    std::memcpy(half, c->data, sizeof half);
    EXPECT_EQ(half[0], 0x3400); // 0.25
    EXPECT_EQ(half[1], 0xfbff); // -65504
}

TEST(Safetensors, refusesHeaderLongerThanFile)
{
    const auto error = parseError(rawFile("{}", 0, 1000));
    EXPECT_NE(error.find("model.safetensors"), std::string::npos);
    EXPECT_NE(error.find("exceeds the file size"), std::string::npos) << error;
}

TEST(Safetensors, refusesTruncatedFile)
{
    std::vector<std::byte> bytes(5);
    EXPECT_NE(parseError(bytes).find("not a safetensors file"), std::string::npos);
}

TEST(Safetensors, refusesMalformedJson)
{
    EXPECT_NE(parseError(rawFile("{\"a\": {\"dtype\": ", 0)).find("not well-formed JSON"),
        std::string::npos);
    EXPECT_NE(parseError(rawFile("[1, 2]", 0)).find("not a JSON object"), std::string::npos);
}

TEST(Safetensors, refusesUnknownDtype)
{
    const auto error
        = parseError(rawFile(R"({"w":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})", 1));
    EXPECT_NE(error.find("unknown dtype \"F4\""), std::string::npos) << error;
}

TEST(Safetensors, refusesShapeThatDoesNotMatchBytes)
{
    const auto error
        = parseError(rawFile(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})", 24));
    EXPECT_NE(error.find("does not match"), std::string::npos) << error;
    EXPECT_NE(error.find("\"w\""), std::string::npos);
}

TEST(Safetensors, refusesOverflowingShape)
{
    const auto error = parseError(rawFile(
        R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,4]}})", 4));
    EXPECT_NE(error.find("does not match"), std::string::npos) << error;
}

TEST(Safetensors, refusesNegativeDimension)
{
    const auto error
        = parseError(rawFile(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4));
    EXPECT_NE(error.find("non-negative"), std::string::npos) << error;
}

TEST(Safetensors, refusesOffsetsPastTheData)
{
    const auto error
        = parseError(rawFile(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}})", 16));
    EXPECT_NE(error.find("runs past the end"), std::string::npos) << error;
    const auto reversed
        = parseError(rawFile(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", 16));
    EXPECT_NE(reversed.find("begin after end"), std::string::npos) << reversed;
}

TEST(Safetensors, refusesOverlappingTensors)
{
    const auto error = parseError(rawFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},
                                              "b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
        12));
    EXPECT_NE(error.find("overlap"), std::string::npos) << error;
}

TEST(Safetensors, refusesMissingFields)
{
    EXPECT_NE(parseError(rawFile(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 4)).find("dtype"),
        std::string::npos);
    EXPECT_NE(parseError(rawFile(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", 4)).find("shape"),
        std::string::npos);
    EXPECT_NE(parseError(rawFile(R"({"w":{"dtype":"F32","shape":[1]}})", 4)).find("data_offsets"),
        std::string::npos);
    EXPECT_NE(parseError(rawFile(R"({"__metadata__":{"a":1}})", 0)).find("__metadata__"),
        std::string::npos);
}

TEST(Safetensors, openNamesTheFileOfAMissingPath)
{
    auto file = SafetensorsFile::open("/nonexistent/dir/model.safetensors");
    ASSERT_FALSE(file);
    EXPECT_NE(file.error().message.find("/nonexistent/dir/model.safetensors"), std::string::npos);
}

TEST(Safetensors, opensShardsThroughTheIndex)
{
    const auto dir = scratch("sharded");
    SafetensorsWriter first;
    first.addFloats("x", TensorType::F32, { 2 }, { 1, 2 });
    SafetensorsWriter second;
    second.addFloats("y", TensorType::BF16, { 3 }, { 3, 4, 5 });
    ASSERT_TRUE(first.write((dir / "model-00001-of-00002.safetensors").string()));
    ASSERT_TRUE(second.write((dir / "model-00002-of-00002.safetensors").string()));
    writeText(dir / "model.safetensors.index.json",
        R"({"metadata":{"total_size":14},"weight_map":{"x":"model-00001-of-00002.safetensors",
                  "y":"model-00002-of-00002.safetensors"}})");
    auto files = SafetensorsModelFiles::openFolder(dir.string());
    ASSERT_TRUE(files) << files.error().message;
    ASSERT_NE(files->find("x"), nullptr);
    ASSERT_NE(files->find("y"), nullptr);
    EXPECT_EQ(files->find("y")->shape, std::vector<std::int64_t> { 3 });
    EXPECT_NE(files->fileOf("y").find("00002"), std::string::npos);
    EXPECT_EQ(files->tensors().size(), 2u);
}

TEST(Safetensors, namesTheMissingShard)
{
    const auto dir = scratch("missing_shard");
    SafetensorsWriter first;
    first.addFloats("x", TensorType::F32, { 2 }, { 1, 2 });
    ASSERT_TRUE(first.write((dir / "model-00001-of-00002.safetensors").string()));
    writeText(dir / "model.safetensors.index.json",
        R"({"weight_map":{"x":"model-00001-of-00002.safetensors",
                  "y":"model-00002-of-00002.safetensors"}})");
    auto files = SafetensorsModelFiles::openFolder(dir.string());
    ASSERT_FALSE(files);
    EXPECT_NE(files.error().message.find("model-00002-of-00002.safetensors is missing"),
        std::string::npos)
        << files.error().message;
}

TEST(Safetensors, refusesIndexThatPointsOutsideTheFolder)
{
    const auto dir = scratch("escaping_index");
    writeText(
        dir / "model.safetensors.index.json", R"({"weight_map":{"x":"../other.safetensors"}})");
    auto files = SafetensorsModelFiles::openFolder(dir.string());
    ASSERT_FALSE(files);
    EXPECT_NE(files.error().message.find("does not name a file"), std::string::npos);
}

TEST(Safetensors, refusesShardWithoutTheIndexedTensor)
{
    const auto dir = scratch("incomplete_shard");
    SafetensorsWriter first;
    first.addFloats("x", TensorType::F32, { 2 }, { 1, 2 });
    ASSERT_TRUE(first.write((dir / "model-00001-of-00001.safetensors").string()));
    writeText(dir / "model.safetensors.index.json",
        R"({"weight_map":{"x":"model-00001-of-00001.safetensors",
                  "z":"model-00001-of-00001.safetensors"}})");
    auto files = SafetensorsModelFiles::openFolder(dir.string());
    ASSERT_FALSE(files);
    EXPECT_NE(files.error().message.find("does not hold tensor \"z\""), std::string::npos);
}

TEST(Safetensors, refusesMalformedIndex)
{
    const auto dir = scratch("bad_index");
    writeText(dir / "model.safetensors.index.json", "{\"weight_map\": ");
    auto files = SafetensorsModelFiles::openFolder(dir.string());
    ASSERT_FALSE(files);
    EXPECT_NE(files.error().message.find("model.safetensors.index.json"), std::string::npos);
}
