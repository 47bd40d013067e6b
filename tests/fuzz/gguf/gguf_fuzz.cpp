// libFuzzer target for the GGUF reader and the GGUF model loader: any bytes must give either a
// file whose every tensor lies inside the buffer, or an error; never a crash or a read out of
// bounds. For files that parse, the loader runs and the first row of each small tensor is
// dequantized (ASan checks it stays inside the buffer).
// Seed corpus (corpus/): files written by GgufWriter: every metadata type with small tensors,
// the tokenizer arrays alone, a tiny qwen3moe model (q8_0) and a tiny qwen35moe model with its
// MTP block (q8_0), as tests/engine/gguf/tiny_gguf_model.cpp writes them.
#include "engine/model_files/gguf_file.h"
#include "engine/model_files/gguf_model_loader.h"
#include "kernels/cpu/quant/dequantize.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    auto file = cw::engine::GgufFile::fromMemory(data, size, "fuzz.gguf");
    if (!file)
        return 0;
    const auto* begin = reinterpret_cast<const std::byte*>(data);
    std::vector<float> row;
    for (const auto& t : file->tensors()) {
        if (t.data < begin || t.data + t.bytes > begin + size)
            std::abort(); // a tensor outside the buffer passed the checks
        if (t.ne[0] <= 4096) {
            row.resize(std::size_t(t.ne[0]));
            cw::kernels::quant::dequantizeRow(t.type, t.data, row.data(), t.ne[0]);
        }
    }
    for (const auto& kv : file->metadata()) {
        (void)file->getStringArray(kv.key);
        (void)file->getIntArray(kv.key);
        (void)file->getDouble(kv.key);
    }
    auto model = cw::engine::describeGgufModel(*file);
    if (model) {
        for (const auto& [name, view] : model->tensors) {
            if (view.data < begin || view.data + view.bytes > begin + size)
                std::abort();
        }
    }
    return 0;
}
