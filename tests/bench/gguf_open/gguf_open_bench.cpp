// Opens a GGUF of the Qwen3-30B-A3B (qwen3moe) geometry quantized with llama.cpp's Q5_K_M mix
// (about 21 GB): header, 579 tensor infos and a 151,936-token vocabulary with 151,387 merges are
// real bytes, the tensor payload is a sparse hole. Prints the time of GgufFile::open and of
// openGgufModel (hyper-parameters, shape checks, views, tokenizer copy), page cache dropped for
// the file before each run. Usage: gguf_open_bench [path] [runs]
#include "engine/model_files/gguf_file.h"
#include "engine/model_files/gguf_model_loader.h"
#include "engine/model_files/gguf_writer.h"
#include "engine/model_files/tensor_names.h"
#include "kernels/cpu/quant/quantize.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace cw::engine;
namespace g = cw::engine::gguf;
using cw::kernels::TensorType;

namespace {

constexpr std::int64_t kHidden = 2048, kLayers = 48, kVocab = 151936, kHeads = 32, kKvHeads = 4,
                       kHeadDim = 128, kExperts = 128, kUsed = 8, kFfn = 768, kMerges = 151387;

struct Planned {
    std::string name;
    std::vector<std::int64_t> ne;
};

std::vector<Planned> geometry()
{
    std::vector<Planned> t = { { g::tensorName(g::kTokenEmbd), { kHidden, kVocab } } };
    for (std::int64_t il = 0; il < kLayers; ++il) {
        auto b = [&](std::string_view name) { return g::blockTensorName(il, name); };
        t.push_back({ b(g::kAttnNorm), { kHidden } });
        t.push_back({ b(g::kAttnQ), { kHidden, kHeads * kHeadDim } });
        t.push_back({ b(g::kAttnK), { kHidden, kKvHeads * kHeadDim } });
        t.push_back({ b(g::kAttnV), { kHidden, kKvHeads * kHeadDim } });
        t.push_back({ b(g::kAttnOutput), { kHeads * kHeadDim, kHidden } });
        t.push_back({ b(g::kAttnQNorm), { kHeadDim } });
        t.push_back({ b(g::kAttnKNorm), { kHeadDim } });
        t.push_back({ b(g::kFfnNorm), { kHidden } });
        t.push_back({ b(g::kFfnGateInp), { kHidden, kExperts } });
        t.push_back({ b(g::kFfnGateExps), { kHidden, kFfn, kExperts } });
        t.push_back({ b(g::kFfnUpExps), { kHidden, kFfn, kExperts } });
        t.push_back({ b(g::kFfnDownExps), { kFfn, kHidden, kExperts } });
    }
    t.push_back({ g::tensorName(g::kOutputNorm), { kHidden } });
    t.push_back({ g::tensorName(g::kOutput), { kHidden, kVocab } });
    return t;
}

cw::Result<void> writeModel(const std::string& path)
{
    const std::string a(g::kArchQwen3Moe);
    GgufWriter w;
    w.setString(std::string(g::kGeneralArchitecture), a);
    w.setString(std::string(g::kGeneralName), "Qwen3-30B-A3B geometry (sparse payload)");
    w.setUint32(g::archKey(a, g::kBlockCount), kLayers);
    w.setUint32(g::archKey(a, g::kContextLength), 40960);
    w.setUint32(g::archKey(a, g::kEmbeddingLength), kHidden);
    w.setUint32(g::archKey(a, g::kFeedForwardLength), 6144);
    w.setUint32(g::archKey(a, g::kAttentionHeadCount), kHeads);
    w.setUint32(g::archKey(a, g::kAttentionHeadCountKv), kKvHeads);
    w.setUint32(g::archKey(a, g::kAttentionKeyLength), kHeadDim);
    w.setUint32(g::archKey(a, g::kAttentionValueLength), kHeadDim);
    w.setFloat32(g::archKey(a, g::kRopeFreqBase), 1000000.0f);
    w.setFloat32(g::archKey(a, g::kAttentionLayerNormRmsEpsilon), 1e-6f);
    w.setUint32(g::archKey(a, g::kExpertCount), kExperts);
    w.setUint32(g::archKey(a, g::kExpertUsedCount), kUsed);
    w.setUint32(g::archKey(a, g::kExpertFeedForwardLength), kFfn);
    std::vector<std::string> tokens, merges;
    std::vector<std::int32_t> types;
    for (std::int64_t i = 0; i < kVocab; ++i) {
        tokens.push_back("\xC4\xA0tok" + std::to_string(i));
        types.push_back(1);
    }
    for (std::int64_t i = 0; i < kMerges; ++i)
        merges.push_back("\xC4\xA0t ok" + std::to_string(i));
    w.setString(std::string(g::kTokenizerModel), "gpt2");
    w.setString(std::string(g::kTokenizerPre), "qwen2");
    w.setStringArray(std::string(g::kTokenizerTokens), tokens);
    w.setInt32Array(std::string(g::kTokenizerTokenType), types);
    w.setStringArray(std::string(g::kTokenizerMerges), merges);
    w.setUint32(std::string(g::kTokenizerEosId), 151645);
    w.setString(std::string(g::kTokenizerChatTemplate), std::string(4000, 'x'));
    const auto tensors = geometry();
    std::vector<std::string> names;
    for (const auto& t : tensors)
        names.push_back(t.name);
    cw::kernels::quant::QuantizationMix mix("q5_k_m", names, kLayers, kExperts);
    for (const auto& t : tensors) {
        const auto type = mix.next(t.name, int(t.ne.size()), t.ne[0], TensorType::F32);
        w.addTensor(t.name, type, t.ne, [](std::byte*, std::uint64_t) -> cw::Result<void> {
            return cw::makeError("a sparse payload is not written");
        });
    }
    GgufWriter::Options options;
    options.sparsePayload = true;
    return w.write(path, options);
}

void dropCache(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd >= 0) {
        ::fdatasync(fd);
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(fd);
    }
}

double seconds(std::chrono::steady_clock::time_point since)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

} // namespace

int main(int argc, char** argv)
{
    const std::string path = argc > 1
        ? argv[1]
        : (std::filesystem::temp_directory_path() / "cw_qwen3_30b_a3b_sparse.gguf").string();
    const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    auto start = std::chrono::steady_clock::now();
    if (auto r = writeModel(path); !r) {
        std::fprintf(stderr, "%s\n", r.error().message.c_str());
        return 1;
    }
    std::printf("wrote %s: %.2f GB (header written in %.2f s)\n", path.c_str(),
        double(std::filesystem::file_size(path)) / 1e9, seconds(start));
    std::vector<double> openTimes, loadTimes, warmTimes;
    for (int i = 0; i < runs; ++i) {
        start = std::chrono::steady_clock::now();
        auto warm = GgufFile::open(path); // header pages already cached
        warmTimes.push_back(seconds(start));
        dropCache(path);
        start = std::chrono::steady_clock::now();
        auto f = GgufFile::open(path);
        openTimes.push_back(seconds(start));
        if (!f) {
            std::fprintf(stderr, "%s\n", f.error().message.c_str());
            return 1;
        }
        dropCache(path);
        start = std::chrono::steady_clock::now();
        auto model = openGgufModel(path);
        loadTimes.push_back(seconds(start));
        if (!model) {
            std::fprintf(stderr, "%s\n", model.error().message.c_str());
            return 1;
        }
        if (i == 0) {
            std::printf("%zu tensors, %zu metadata keys, data section at %llu, %zu tokens\n",
                f->tensors().size(), f->metadata().size(),
                static_cast<unsigned long long>(f->dataOffset()),
                model->tokenizer.ggmlTokens.size());
        }
    }
    std::sort(openTimes.begin(), openTimes.end());
    std::sort(warmTimes.begin(), warmTimes.end());
    std::sort(loadTimes.begin(), loadTimes.end());
    std::printf(
        "GgufFile::open      median %.3f s (min %.3f, max %.3f) over %d runs, cold page cache\n",
        openTimes[openTimes.size() / 2], openTimes.front(), openTimes.back(), runs);
    std::printf("GgufFile::open      median %.3f s (min %.3f) with the header in the page cache\n",
        warmTimes[warmTimes.size() / 2], warmTimes.front());
    std::printf("openGgufModel       median %.3f s (min %.3f, max %.3f)\n",
        loadTimes[loadTimes.size() / 2], loadTimes.front(), loadTimes.back());
    std::filesystem::remove(path);
    return 0;
}
