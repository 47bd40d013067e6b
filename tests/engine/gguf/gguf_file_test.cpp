#include "engine/model_files/gguf_file.h"
#include "engine/model_files/gguf_writer.h"
#include "kernels/cpu/quant/quantize.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <numeric>

using namespace cw::engine;
using cw::kernels::TensorType;

namespace {

std::string tempPath(const std::string& name)
{
    return (std::filesystem::temp_directory_path() / ("cw_gguf_test_" + name)).string();
}

GgufValue nested()
{
    // An array of arrays of strings.
    GgufArray outer { GgufType::Array, {} };
    for (int i = 0; i < 2; ++i) {
        GgufArray inner { GgufType::String, {} };
        for (int j = 0; j <= i; ++j)
            inner.values.push_back(GgufValue { "s" + std::to_string(i) + std::to_string(j) });
        outer.values.push_back(GgufValue { std::move(inner) });
    }
    return GgufValue { std::move(outer) };
}

GgufWriter writerWithEverything(std::uint32_t alignment)
{
    GgufWriter w(alignment);
    w.setString("general.architecture", "qwen3moe");
    w.set("t.u8", GgufValue { std::uint8_t(200) });
    w.set("t.i8", GgufValue { std::int8_t(-100) });
    w.set("t.u16", GgufValue { std::uint16_t(60000) });
    w.set("t.i16", GgufValue { std::int16_t(-30000) });
    w.setUint32("t.u32", 4000000000u);
    w.setInt32("t.i32", -2000000000);
    w.setFloat32("t.f32", 1.5f);
    w.setBool("t.bool", true);
    w.setString("t.string", "hello \xE4\xB8\x96\xE7\x95\x8C");
    w.setUint64("t.u64", 18000000000000000000ull);
    w.set("t.i64", GgufValue { std::int64_t(-9000000000000000000ll) });
    w.set("t.f64", GgufValue { 2.25 });
    w.setStringArray("t.strings", { "a", "", "c d" });
    w.setInt32Array("t.ints", { 1, -2, 3 });
    w.setFloat32Array("t.floats", { 0.5f });
    w.set("t.empty", GgufValue { GgufArray { GgufType::Uint8, {} } });
    w.set("t.nested", nested());
    return w;
}

void expectEverything(const GgufFile& f)
{
    EXPECT_EQ(f.getString("general.architecture"), "qwen3moe");
    EXPECT_EQ(f.find("t.u8")->type(), GgufType::Uint8);
    EXPECT_EQ(f.getInt("t.u8"), 200);
    EXPECT_EQ(f.getInt("t.i8"), -100);
    EXPECT_EQ(f.getInt("t.u16"), 60000);
    EXPECT_EQ(f.getInt("t.i16"), -30000);
    EXPECT_EQ(f.getUint("t.u32"), 4000000000u);
    EXPECT_EQ(f.getInt("t.i32"), -2000000000);
    EXPECT_EQ(f.getDouble("t.f32"), 1.5);
    EXPECT_EQ(f.getBool("t.bool"), true);
    EXPECT_EQ(f.getString("t.string"), "hello \xE4\xB8\x96\xE7\x95\x8C");
    EXPECT_EQ(f.getUint("t.u64"), 18000000000000000000ull);
    EXPECT_FALSE(f.getInt("t.u64")); // does not fit in int64
    EXPECT_EQ(f.getInt("t.i64"), -9000000000000000000ll);
    EXPECT_FALSE(f.getUint("t.i64"));
    EXPECT_EQ(f.getDouble("t.f64"), 2.25);
    EXPECT_EQ(f.getStringArray("t.strings"), (std::vector<std::string> { "a", "", "c d" }));
    EXPECT_EQ(f.getIntArray("t.ints"), (std::vector<std::int64_t> { 1, -2, 3 }));
    EXPECT_FALSE(f.getStringArray("t.ints"));
    ASSERT_NE(f.getArray("t.floats"), nullptr);
    EXPECT_EQ(f.getArray("t.floats")->elementType, GgufType::Float32);
    ASSERT_NE(f.getArray("t.empty"), nullptr);
    EXPECT_TRUE(f.getArray("t.empty")->values.empty());
    const auto* outer = f.getArray("t.nested");
    ASSERT_NE(outer, nullptr);
    ASSERT_EQ(outer->values.size(), 2u);
    const auto* inner = outer->values[1].asArray();
    ASSERT_NE(inner, nullptr);
    ASSERT_EQ(inner->values.size(), 2u);
    EXPECT_EQ(*inner->values[1].asString(), "s11");
    EXPECT_FALSE(f.getString("missing"));
    EXPECT_FALSE(f.requireInt("missing").ok());
    EXPECT_NE(
        f.requireInt("t.string").error().message.find("should be an integer"), std::string::npos);
}

} // namespace

TEST(GgufFile, writerToReaderRoundTripKeepsEveryValueTypeAndTensor)
{
    for (std::uint32_t alignment : { 32u, 64u }) {
        GgufWriter w = writerWithEverything(alignment);
        std::vector<float> f32(3 * 5);
        std::iota(f32.begin(), f32.end(), -7.0f);
        w.addTensor("a.f32", TensorType::F32, { 5, 3 }, f32.data(), f32.size() * 4);
        std::vector<float> src(512);
        for (std::size_t i = 0; i < src.size(); ++i)
            src[i] = std::sin(float(i));
        std::vector<std::vector<std::byte>> quantized;
        for (TensorType type : { TensorType::F16, TensorType::Q8_0, TensorType::Q4_K,
                 TensorType::Q6_K, TensorType::BF16 }) {
            std::vector<std::byte> bytes(*cw::kernels::rowBytes(type, 512));
            ASSERT_TRUE(cw::kernels::quant::quantizeRow(type, src.data(), bytes.data(), 512));
            quantized.push_back(bytes);
            const std::string name
                = "b." + std::string(cw::kernels::tensorTypeTraits(std::uint32_t(type))->name);
            w.addTensor(name, type, { 256, 2 }, bytes);
        }
        w.addTensor("c.filled", TensorType::F32, { 4, 1, 1, 2 },
            [](std::byte* dst, std::uint64_t n) -> cw::Result<void> {
                for (std::uint64_t i = 0; i < n; ++i)
                    dst[i] = std::byte(i);
                return {};
            });
        const std::string path = tempPath("roundtrip" + std::to_string(alignment) + ".gguf");
        ASSERT_TRUE(w.write(path).ok());
        auto bytes = w.toBytes();
        ASSERT_TRUE(bytes.ok());
        EXPECT_EQ(std::filesystem::file_size(path), bytes->size());

        auto f = GgufFile::open(path);
        ASSERT_TRUE(f.ok()) << f.error().message;
        EXPECT_EQ(f->version(), 3u);
        EXPECT_EQ(f->alignment(), alignment);
        EXPECT_EQ(f->dataOffset() % alignment, 0u);
        expectEverything(*f);
        ASSERT_EQ(f->tensors().size(), 7u);
        const auto* a = f->findTensor("a.f32");
        ASSERT_NE(a, nullptr);
        EXPECT_EQ(a->nDims, 2);
        EXPECT_EQ(a->ne[0], 5);
        EXPECT_EQ(a->ne[1], 3);
        EXPECT_EQ(a->bytes, 60u);
        EXPECT_EQ(std::memcmp(a->data, f32.data(), 60), 0);
        std::size_t k = 0;
        for (TensorType type : { TensorType::F16, TensorType::Q8_0, TensorType::Q4_K,
                 TensorType::Q6_K, TensorType::BF16 }) {
            const auto* t = f->findTensor(
                "b." + std::string(cw::kernels::tensorTypeTraits(std::uint32_t(type))->name));
            ASSERT_NE(t, nullptr);
            EXPECT_EQ(t->type, type);
            EXPECT_EQ(t->offset % alignment, 0u);
            ASSERT_EQ(t->bytes, quantized[k].size());
            EXPECT_EQ(std::memcmp(t->data, quantized[k].data(), t->bytes), 0);
            ++k;
        }
        const auto* c = f->findTensor("c.filled");
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(c->nDims, 4);
        EXPECT_EQ(c->elements(), 8);
        EXPECT_EQ(std::uint8_t(c->data[31]), 31);
        EXPECT_TRUE(f->mapping() != nullptr);

        auto fromMemory = GgufFile::fromMemory(bytes->data(), bytes->size(), "memory");
        ASSERT_TRUE(fromMemory.ok());
        expectEverything(*fromMemory);
        std::remove(path.c_str());
    }
}

TEST(GgufFile, writerRefusesInconsistentTensors)
{
    GgufWriter w;
    std::vector<std::byte> small(10);
    w.addTensor("t", TensorType::F32, { 4 }, small);
    EXPECT_FALSE(w.toBytes().ok());

    GgufWriter dup;
    dup.addTensor("t", TensorType::F32, { 1 }, std::vector<std::byte>(4));
    dup.addTensor("t", TensorType::F32, { 1 }, std::vector<std::byte>(4));
    const auto r = dup.toBytes();
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("duplicate"), std::string::npos);

    GgufWriter partial;
    partial.addTensor("q", TensorType::Q4_K, { 100 }, std::vector<std::byte>(144));
    EXPECT_FALSE(partial.toBytes().ok());
}

TEST(GgufFile, sparsePayloadLeavesAHoleButOpens)
{
    GgufWriter w;
    w.setString("general.architecture", "x");
    w.addTensor(
        "big", TensorType::Q8_0, { 4096, 4096 }, [](std::byte*, std::uint64_t) -> cw::Result<void> {
            return cw::makeError("not called for a sparse payload");
        });
    const std::string path = tempPath("sparse.gguf");
    GgufWriter::Options options;
    options.sparsePayload = true;
    ASSERT_TRUE(w.write(path, options).ok());
    auto f = GgufFile::open(path);
    ASSERT_TRUE(f.ok()) << f.error().message;
    EXPECT_EQ(f->findTensor("big")->bytes, 4096u * 4096u / 32u * 34u);
    EXPECT_EQ(f->fileSize(), f->dataOffset() + f->findTensor("big")->bytes);
    std::remove(path.c_str());
}
