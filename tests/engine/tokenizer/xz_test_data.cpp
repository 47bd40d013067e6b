#include "xz_test_data.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <lzma.h>
#include <sstream>

namespace cw::test {

Result<std::string> readXzFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError(path + ": cannot open the file");
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string compressed = buffer.str();

    lzma_stream stream = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&stream, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
        return makeError(path + ": cannot start the xz decoder");
    std::string out;
    std::string chunk(1 << 20, '\0');
    stream.next_in = reinterpret_cast<const std::uint8_t*>(compressed.data());
    stream.avail_in = compressed.size();
    lzma_ret ret = LZMA_OK;
    while (ret == LZMA_OK) {
        stream.next_out = reinterpret_cast<std::uint8_t*>(chunk.data());
        stream.avail_out = chunk.size();
        ret = lzma_code(&stream, LZMA_FINISH);
        out.append(chunk.data(), chunk.size() - stream.avail_out);
    }
    lzma_end(&stream);
    if (ret != LZMA_STREAM_END)
        return makeError(
            path + ": xz data is corrupt (lzma error " + std::to_string(int(ret)) + ")");
    return out;
}

Result<std::string> unpackXzFile(const std::string& xzPath, const std::string& outputPath)
{
    auto data = readXzFile(xzPath);
    if (!data)
        return data.error();
    {
        std::ifstream existing(outputPath, std::ios::binary | std::ios::ate);
        if (existing && std::size_t(existing.tellg()) == data->size())
            return outputPath;
    }
    const std::string temporary = outputPath + ".part";
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out.write(data->data(), std::streamsize(data->size()));
        if (!out)
            return makeError(temporary + ": cannot write");
    }
    if (std::rename(temporary.c_str(), outputPath.c_str()) != 0)
        return makeError(outputPath + ": cannot rename the unpacked file into place");
    return outputPath;
}

} // namespace cw::test
