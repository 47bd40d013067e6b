#pragma once

// Reads a float32 C-order .npy file (what numpy.save writes for the golden logits).

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace cw::test {

struct NpyArray {
    std::vector<std::int64_t> shape;
    std::vector<float> data;
};

inline std::optional<NpyArray> readNpy(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return std::nullopt;
    char magic[8];
    in.read(magic, 8);
    if (!in || std::string(magic + 1, 5) != "NUMPY")
        return std::nullopt;
    std::uint32_t headerLen = 0;
    if (magic[6] == 1) {
        std::uint16_t h = 0;
        in.read(reinterpret_cast<char*>(&h), 2);
        headerLen = h;
    } else {
        in.read(reinterpret_cast<char*>(&headerLen), 4);
    }
    std::string header(headerLen, '\0');
    in.read(header.data(), headerLen);
    if (header.find("'<f4'") == std::string::npos
        || header.find("'fortran_order': False") == std::string::npos)
        return std::nullopt;
    NpyArray a;
    const auto open = header.find('('), close = header.find(')');
    std::stringstream dims(header.substr(open + 1, close - open - 1));
    std::string part;
    std::int64_t count = 1;
    while (std::getline(dims, part, ','))
        if (part.find_first_of("0123456789") != std::string::npos) {
            a.shape.push_back(std::stoll(part));
            count *= a.shape.back();
        }
    a.data.resize(std::size_t(count));
    in.read(reinterpret_cast<char*>(a.data.data()), std::streamsize(count * 4));
    if (!in)
        return std::nullopt;
    return a;
}

} // namespace cw::test
