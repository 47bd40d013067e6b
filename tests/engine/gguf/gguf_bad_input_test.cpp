// Malformed GGUF files: each must give one clear error naming the file and the problem.
#include "engine/model_files/gguf_file.h"
#include "engine/model_files/gguf_writer.h"
#include "raw_gguf.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

using namespace cw::engine;
using cw::test::RawGguf;

namespace {

// Parses the bytes as "bad.gguf" and returns the error (fails the test if it parsed).
std::string errorOf(const std::vector<std::uint8_t>& bytes)
{
    auto f = GgufFile::fromMemory(bytes.data(), bytes.size(), "bad.gguf");
    if (f.ok()) {
        ADD_FAILURE() << "parsed a malformed file";
        return {};
    }
    EXPECT_EQ(f.error().message.rfind("bad.gguf: ", 0), 0u) << f.error().message;
    return f.error().message;
}

void expectError(const std::vector<std::uint8_t>& bytes, const std::string& part)
{
    const auto message = errorOf(bytes);
    EXPECT_NE(message.find(part), std::string::npos) << "message: " << message;
}

// A valid file with one F32 tensor of 8 values.
RawGguf validFile()
{
    RawGguf g;
    g.header(1, 1).str("general.architecture").u32(8).str("x");
    g.tensor("t", { 8 }, 0, 0).padTo(32).zeros(32);
    return g;
}

} // namespace

TEST(GgufBadInput, theValidBaseFileParses)
{
    const auto bytes = validFile().data();
    auto f = GgufFile::fromMemory(bytes.data(), bytes.size(), "ok.gguf");
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(f->tensors().size(), 1u);
}

TEST(GgufBadInput, refusesTruncatedGgufAtEveryLength)
{
    const auto full = validFile().data();
    for (std::size_t n = 0; n < full.size(); ++n) {
        std::vector<std::uint8_t> cut(full.begin(), full.begin() + std::ptrdiff_t(n));
        const auto message = errorOf(cut);
        const bool named = message.find("truncated") != std::string::npos
            || message.find("past the end") != std::string::npos;
        EXPECT_TRUE(named) << n << ": " << message;
    }
}

TEST(GgufBadInput, refusesWrongMagic)
{
    auto bytes = validFile().data();
    bytes[0] = 'X';
    expectError(bytes, "not a GGUF file");
}

TEST(GgufBadInput, refusesBadVersions)
{
    RawGguf v7;
    v7.header(0, 0, 7);
    expectError(v7.data(), "unsupported GGUF version 7");
    RawGguf v1;
    v1.header(0, 0, 1);
    expectError(v1.data(), "version 1 is not supported");
    RawGguf bigEndian;
    bigEndian.header(0, 0, 0x03000000u);
    expectError(bigEndian.data(), "big-endian");
    RawGguf v2;
    v2.header(0, 0, 2);
    EXPECT_TRUE(GgufFile::fromMemory(v2.data().data(), v2.data().size(), "v2").ok());
}

TEST(GgufBadInput, refusesTensorPastTheEnd)
{
    RawGguf g;
    g.header(1, 0).tensor("t", { 8 }, 0, 32).padTo(32).zeros(32); // offset 32 + 32 bytes > 32
    expectError(g.data(), "runs past the end");
    RawGguf huge;
    huge.header(1, 0).tensor("t", { 8 }, 0, 1ull << 62).padTo(32).zeros(32);
    expectError(huge.data(), "runs past the end");
}

TEST(GgufBadInput, refusesOverlappingTensors)
{
    RawGguf g;
    g.header(2, 0).tensor("a", { 16 }, 0, 0).tensor("b", { 8 }, 0, 32).padTo(32).zeros(64);
    expectError(g.data(), "overlap");
}

TEST(GgufBadInput, refusesUnknownTensorType)
{
    RawGguf g;
    g.header(1, 0).tensor("t", { 8 }, 99, 0).padTo(32).zeros(32);
    expectError(g.data(), "unknown or unsupported tensor type 99");
}

TEST(GgufBadInput, refusesAbsurdDimensionsAndCounts)
{
    RawGguf dim;
    dim.header(1, 0).tensor("t", { 1ull << 50, 1 }, 0, 0).padTo(32).zeros(32);
    expectError(dim.data(), "absurd dimension");
    RawGguf zero;
    zero.header(1, 0).tensor("t", { 0 }, 0, 0).padTo(32);
    expectError(zero.data(), "absurd dimension");
    RawGguf product; // each dimension allowed, the product far beyond the file
    product.header(1, 0)
        .tensor("t", { 1ull << 20, 1ull << 20, 1ull << 20, 1ull << 20 }, 0, 0)
        .padTo(32)
        .zeros(32);
    expectError(product.data(), "needs more bytes than the whole file");
    RawGguf dims;
    dims.header(1, 0).tensor("t", { 1, 1, 1, 1, 1 }, 0, 0).padTo(32).zeros(32);
    expectError(dims.data(), "5 dimensions");
    RawGguf tensors;
    tensors.header(1ull << 60, 0);
    expectError(tensors.data(), "tensor count");
    RawGguf kvs;
    kvs.header(0, 1ull << 60);
    expectError(kvs.data(), "metadata count");
    RawGguf array;
    array.header(0, 1).str("a").u32(9).u32(4).u64(1ull << 61);
    expectError(array.data(), "cannot fit");
    RawGguf block; // a Q8_0 row of 33 values is not whole blocks
    block.header(1, 0).tensor("t", { 33 }, 8, 0).padTo(32).zeros(64);
    expectError(block.data(), "not a multiple of the q8_0 block size");
}

TEST(GgufBadInput, refusesDuplicateNamesAndKeys)
{
    RawGguf g;
    g.header(2, 0).tensor("t", { 8 }, 0, 0).tensor("t", { 8 }, 0, 32).padTo(32).zeros(64);
    expectError(g.data(), "duplicate tensor name \"t\"");
    RawGguf k;
    k.header(0, 2).str("a").u32(4).u32(1).str("a").u32(4).u32(2);
    expectError(k.data(), "duplicate metadata key \"a\"");
}

TEST(GgufBadInput, refusesStringLengthsPastTheEnd)
{
    RawGguf key;
    key.header(0, 1).u64(1000).bytes("abc", 3).zeros(20);
    expectError(key.data(), "runs past the end");
    RawGguf value;
    value.header(0, 1).str("k").u32(8).u64(1ull << 40);
    expectError(value.data(), "string length 1099511627776 of metadata \"k\"");
    RawGguf name;
    name.header(1, 0).u64(99).bytes("t", 1).zeros(40);
    expectError(name.data(), "tensor info 0");
}

TEST(GgufBadInput, refusesOtherInconsistencies)
{
    RawGguf type;
    type.header(0, 1).str("k").u32(13).u32(0);
    expectError(type.data(), "unknown value type 13");
    RawGguf boolean;
    boolean.header(0, 1).str("k").u32(7).u8(2);
    expectError(boolean.data(), "neither 0 nor 1");
    RawGguf alignment;
    alignment.header(0, 1).str("general.alignment").u32(4).u32(48);
    expectError(alignment.data(), "power of two");
    RawGguf misaligned;
    misaligned.header(1, 0).tensor("t", { 4 }, 0, 16).padTo(32).zeros(64);
    expectError(misaligned.data(), "not a multiple of the alignment");
    RawGguf deep; // arrays nested 5 deep
    deep.header(0, 1).str("k").u32(9);
    for (int i = 0; i < 5; ++i)
        deep.u32(9).u64(1);
    deep.u32(0).u64(0);
    expectError(deep.data(), "nested deeper");
}

TEST(GgufBadInput, openNamesTheFileWhenItCannotBeRead)
{
    auto missing = GgufFile::open("/nonexistent/model.gguf");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("/nonexistent/model.gguf"), std::string::npos);
    const auto dir = std::filesystem::temp_directory_path();
    auto directory = GgufFile::open(dir.string());
    ASSERT_FALSE(directory.ok());
    const std::string empty = (dir / "cw_gguf_empty.gguf").string();
    std::ofstream(empty).close();
    auto e = GgufFile::open(empty);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message.find("empty"), std::string::npos);
    std::remove(empty.c_str());
}
