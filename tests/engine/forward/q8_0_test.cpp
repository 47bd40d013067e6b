// The forward pass on Q8_0 weights: every matrix of the tiny golden models quantized to Q8_0
// in memory as llama.cpp's q8_0 mix does (norms, router, conv taps and decay parameters stay
// as they are).
//
// The Q8_0 kernels compute what float32 weights holding the same dequantized values give.
// Top-1 agreement of Q8_0 files with the transformers reference is checked on files written by
// `convert`, in gguf_golden_test.cpp.
#include "engine/model_files/model_loader.h"
#include "engine/runtime/model.h"
#include "kernels/cpu/quant/dequantize.h"
#include "kernels/cpu/quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using cw::kernels::TensorType;

namespace {

const std::string kGolden = std::string(CW_TEST_DATA_DIR) + "/golden";

bool keepsItsType(const std::string& name)
{
    return name.find("norm") != std::string::npos || name.find("ffn_gate_inp") != std::string::npos
        || name.find("ssm_conv1d") != std::string::npos || name.find("ssm_a") != std::string::npos
        || name.find("ssm_dt") != std::string::npos;
}

// Quantizes the matrices to Q8_0; with `dequantizeBack` stores the Q8_0 values as float32.
cw::engine::ModelDescription quantized(const std::string& name, bool dequantizeBack)
{
    auto opened = cw::engine::openModel(kGolden + "/models/" + name);
    EXPECT_TRUE(opened.ok());
    auto d = std::move(*opened);
    for (auto& [tensorName, view] : d.tensors) {
        if (view.nDims < 2 || view.ne[0] % 32 != 0 || keepsItsType(tensorName))
            continue;
        const std::int64_t cols = view.ne[0];
        const std::int64_t rows = view.elements() / cols;
        const std::int64_t rowsPerSlice = rows / view.ne[std::size_t(view.nDims - 1)];
        const auto srcStride = *cw::kernels::rowBytes(view.type, std::uint64_t(cols));
        const auto q8Stride = *cw::kernels::rowBytes(TensorType::Q8_0, std::uint64_t(cols));
        auto q8
            = std::make_shared<std::vector<std::byte>>(std::size_t(q8Stride * std::uint64_t(rows)));
        auto f32
            = std::make_shared<std::vector<float>>(dequantizeBack ? std::size_t(rows * cols) : 0);
        std::vector<float> row(static_cast<std::size_t>(cols));
        for (std::int64_t r = 0; r < rows; ++r) {
            const std::byte* src
                = view.slice(r / rowsPerSlice) + srcStride * std::uint64_t(r % rowsPerSlice);
            cw::kernels::quant::dequantizeRow(view.type, src, row.data(), cols);
            std::byte* dst = q8->data() + q8Stride * std::uint64_t(r);
            EXPECT_TRUE(cw::kernels::quant::quantizeRow(TensorType::Q8_0, row.data(), dst, cols));
            if (dequantizeBack)
                cw::kernels::quant::dequantizeRow(
                    TensorType::Q8_0, dst, f32->data() + r * cols, cols);
        }
        view.slices.clear();
        if (dequantizeBack) {
            view.type = TensorType::F32;
            view.data = reinterpret_cast<const std::byte*>(f32->data());
            view.bytes = f32->size() * sizeof(float);
            d.storage.push_back(f32);
        } else {
            view.type = TensorType::Q8_0;
            view.data = q8->data();
            view.bytes = q8->size();
            d.storage.push_back(q8);
        }
    }
    return d;
}

std::unique_ptr<cw::engine::Model> create(cw::engine::ModelDescription d)
{
    auto model = cw::engine::Model::create(std::move(d), {});
    EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
    return std::move(*model);
}

nlohmann::json meta(const std::string& name)
{
    std::ifstream in(kGolden + "/ref/" + name + "/meta.json");
    return nlohmann::json::parse(in);
}

class Q8_0Model : public ::testing::TestWithParam<std::string> { };

} // namespace

TEST_P(Q8_0Model, kernelsEqualFloatWeightsOfTheSameValues)
{
    auto q8 = create(quantized(GetParam(), false));
    auto f32 = create(quantized(GetParam(), true));
    const auto m = meta(GetParam());
    const auto ids = m["prompts"][2]["ids"].get<std::vector<std::int32_t>>();
    auto s1 = q8->newSequence();
    auto s2 = f32->newSequence();
    auto a = q8->prefill(*s1, ids, true);
    auto b = f32->prefill(*s2, ids, true);
    ASSERT_TRUE(a.ok() && b.ok());
    float worst = 0.0f, largest = 0.0f;
    for (std::size_t i = 0; i < a->size(); ++i) {
        worst = std::max(worst, std::fabs((*a)[i] - (*b)[i]));
        largest = std::max(largest, std::fabs((*b)[i]));
    }
    EXPECT_LE(worst, 1e-3f * largest);
}

INSTANTIATE_TEST_SUITE_P(AllShapes, Q8_0Model,
    ::testing::Values("qwen3_moe_a", "qwen3_moe_b", "qwen3_moe_c", "qwen3_5_moe_a", "qwen3_5_moe_b",
        "qwen3_5_moe_c"));
