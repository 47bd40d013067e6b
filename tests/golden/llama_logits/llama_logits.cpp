// The peer's logits for issue 29's Q8_0 agreement figure (tests/golden/q8_agreement.py): one
// prompt of token ids through llama.cpp's public API, every position's logits out, so that
// llama.cpp and clausewright-cli score are judged on the same files, ids and positions.
//   llama_logits MODEL.gguf IDS.json OUT.bin [--cpu]
// IDS.json: a JSON array of token ids (only digits, commas, brackets and spaces). OUT.bin:
// float32 [n_ids][n_vocab] after an int32 header {n_ids, n_vocab}.
#include "llama.h"

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

bool readIds(const char* path, std::vector<llama_token>& ids)
{
    std::ifstream in(path);
    if (!in)
        return false;
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string number;
    for (const char c : text + ",") {
        if (std::isdigit(static_cast<unsigned char>(c))) {
            number += c;
        } else if (c == ',' || c == ']' || c == '['
            || std::isspace(static_cast<unsigned char>(c))) {
            if (!number.empty())
                ids.push_back(llama_token(std::stol(number)));
            number.clear();
        } else {
            return false;
        }
    }
    return !ids.empty();
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: llama_logits MODEL.gguf IDS.json OUT.bin [--cpu]\n");
        return 2;
    }
    const bool cpu = argc > 4 && std::strcmp(argv[4], "--cpu") == 0;
    std::vector<llama_token> ids;
    if (!readIds(argv[2], ids)) {
        std::fprintf(stderr, "llama_logits: %s: not a JSON array of token ids\n", argv[2]);
        return 2;
    }
    llama_backend_init();
    llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = cpu ? 0 : 999;
    llama_model* model = llama_model_load_from_file(argv[1], mp);
    if (!model) {
        std::fprintf(stderr, "llama_logits: %s: llama.cpp could not load it\n", argv[1]);
        return 1;
    }
    const int n = int(ids.size());
    const int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = uint32_t(n + 16);
    cp.n_batch = uint32_t(n);
    cp.n_ubatch = uint32_t(n < 2048 ? n : 2048); // its best prompt setting (-ub 2048)
    cp.n_seq_max = 1;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_AUTO;
    llama_context* ctx = llama_init_from_model(model, cp);
    if (!ctx) {
        std::fprintf(stderr, "llama_logits: no context for %d tokens\n", n);
        return 1;
    }
    llama_batch batch = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; ++i) {
        batch.token[i] = ids[std::size_t(i)];
        batch.pos[i] = i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = 1;
    }
    batch.n_tokens = n;
    if (const int32_t rc = llama_decode(ctx, batch); rc != 0) {
        std::fprintf(stderr, "llama_logits: llama_decode returned %d\n", rc);
        return 1;
    }
    std::FILE* out = std::fopen(argv[3], "wb");
    if (!out) {
        std::fprintf(stderr, "llama_logits: cannot write %s\n", argv[3]);
        return 1;
    }
    const std::int32_t header[2] = { n, vocab };
    bool ok = std::fwrite(header, sizeof header, 1, out) == 1;
    for (int i = 0; i < n && ok; ++i) {
        const float* row = llama_get_logits_ith(ctx, i);
        ok = row && std::fwrite(row, sizeof(float), std::size_t(vocab), out) == std::size_t(vocab);
    }
    ok = std::fclose(out) == 0 && ok;
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    if (!ok) {
        std::fprintf(stderr, "llama_logits: writing %s failed\n", argv[3]);
        return 1;
    }
    return 0;
}
