#include "qwen3_vocab.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <lzma.h>
#include <vector>

namespace cw::sampling::test {

namespace {

Result<std::string> readXz(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError(path + ": cannot open");
    const std::string packed(
        (std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    lzma_stream strm = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&strm, UINT64_MAX, 0) != LZMA_OK)
        return makeError(path + ": cannot start the xz decoder");
    std::string out;
    std::vector<uint8_t> buf(1 << 20);
    strm.next_in = reinterpret_cast<const uint8_t*>(packed.data());
    strm.avail_in = packed.size();
    lzma_ret ret = LZMA_OK;
    while (ret == LZMA_OK) {
        strm.next_out = buf.data();
        strm.avail_out = buf.size();
        ret = lzma_code(&strm, LZMA_FINISH);
        out.append(reinterpret_cast<const char*>(buf.data()), buf.size() - strm.avail_out);
    }
    lzma_end(&strm);
    if (ret != LZMA_STREAM_END)
        return makeError(path + ": xz data is corrupt");
    return out;
}

} // namespace

Result<std::shared_ptr<const TokenVocabulary>> loadQwen3Vocabulary(const std::string& path)
{
    Result<std::string> data = readXz(path);
    if (!data)
        return data.error();
    const std::string& d = *data;
    if (d.size() < 12 || d.compare(0, 8, "CWVOCAB1") != 0)
        return makeError(path + ": not a CWVOCAB1 file");
    uint32_t count;
    std::memcpy(&count, d.data() + 8, 4);
    size_t pos = 12;
    std::vector<std::string> tokens;
    std::vector<int32_t> special;
    for (uint32_t i = 0; i < count; ++i) {
        if (pos + 3 > d.size())
            return makeError(path + ": truncated at token " + std::to_string(i));
        const auto flags = static_cast<uint8_t>(d[pos]);
        uint16_t len;
        std::memcpy(&len, d.data() + pos + 1, 2);
        pos += 3;
        if (pos + len > d.size())
            return makeError(path + ": truncated at token " + std::to_string(i));
        tokens.emplace_back(d.data() + pos, len);
        pos += len;
        if (flags != 0)
            special.push_back(static_cast<int32_t>(i));
    }
    auto vocab = TokenVocabulary::create(
        std::move(tokens), std::move(special), { kQwen3EndOfText, kQwen3ImEnd });
    if (!vocab)
        return vocab.error();
    return std::make_shared<const TokenVocabulary>(std::move(*vocab));
}

} // namespace cw::sampling::test
