#pragma once

// Hand-assembled GGUF bytes for tests of malformed files: each call appends one field.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace cw::test {

class RawGguf {
public:
    RawGguf& bytes(const void* p, std::size_t n)
    {
        const auto* b = static_cast<const std::uint8_t*>(p);
        m_data.insert(m_data.end(), b, b + n);
        return *this;
    }
    RawGguf& u8(std::uint8_t v) { return bytes(&v, 1); }
    RawGguf& u32(std::uint32_t v) { return bytes(&v, 4); }
    RawGguf& u64(std::uint64_t v) { return bytes(&v, 8); }
    RawGguf& f32(float v) { return bytes(&v, 4); }
    RawGguf& str(const std::string& s) { return u64(s.size()).bytes(s.data(), s.size()); }
    RawGguf& header(std::uint64_t tensors, std::uint64_t kvs, std::uint32_t version = 3)
    {
        return bytes("GGUF", 4).u32(version).u64(tensors).u64(kvs);
    }
    // A tensor info: name, dims, type, offset.
    RawGguf& tensor(const std::string& name, std::vector<std::uint64_t> ne, std::uint32_t type,
        std::uint64_t offset)
    {
        str(name).u32(std::uint32_t(ne.size()));
        for (auto n : ne)
            u64(n);
        return u32(type).u64(offset);
    }
    RawGguf& padTo(std::size_t alignment)
    {
        while (m_data.size() % alignment)
            m_data.push_back(0);
        return *this;
    }
    RawGguf& zeros(std::size_t n)
    {
        m_data.insert(m_data.end(), n, 0);
        return *this;
    }
    const std::vector<std::uint8_t>& data() const { return m_data; }

private:
    std::vector<std::uint8_t> m_data;
};

} // namespace cw::test
