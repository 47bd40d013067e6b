#include "engine/model_files/model_loader.h"
#include "engine/model_files/model_presets.h"
#include "tiny_hf_model.h"

#include <gtest/gtest.h>

namespace fs = std::filesystem;
using namespace cw::engine;

namespace {

fs::path scratch(const std::string& name)
{
    return fs::path(CW_TEST_BINARY_DIR) / "loader_scratch" / name;
}

} // namespace

TEST(ModelLoader, openModelDispatchesFolderAndBareSafetensors)
{
    tiny_hf::Options o;
    o.shape = tiny_hf::Shape::Qwen3Moe;
    o.layers = 1;
    const auto dir = scratch("dispatch");
    tiny_hf::writeFolder(dir, o);
    auto fromFolder = openModel(dir.string());
    ASSERT_TRUE(fromFolder) << fromFolder.error().message;
    auto fromFile = openModel((dir / "model.safetensors").string());
    ASSERT_TRUE(fromFile) << fromFile.error().message;
    EXPECT_EQ(fromFile->tensors.size(), fromFolder->tensors.size());
    EXPECT_FALSE(openModel((dir / "nothing-here").string()));
    auto notModel = openModel((dir / "tokenizer_config.json").string());
    ASSERT_FALSE(notModel);
    EXPECT_NE(notModel.error().message.find("neither a GGUF"), std::string::npos);
}

TEST(ModelLoader, openModelDispatchesGgufByMagic)
{
    const auto dir = scratch("gguf");
    fs::create_directories(dir);
    // A GGUF file whose name does not say so: the magic decides.
    const auto path = dir / "model.bin";
    ASSERT_TRUE(synthesizeGguf(*findModelPreset("tiny-qwen3-moe"), "q8_0", 1, path.string()));
    auto model = openModel(path.string());
    ASSERT_TRUE(model) << model.error().message;
    EXPECT_EQ(model->hparams.architecture, Architecture::Qwen3Moe);
    EXPECT_NE(model->find("blk.1.ffn_down_exps.weight"), nullptr);
}
