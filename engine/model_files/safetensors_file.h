#pragma once

#include "engine/common/result.h"
#include "kernels/tensor_type.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cw::engine {

using kernels::TensorType;

// One tensor of a safetensors file. The shape is in the file's (PyTorch) order, outermost
// first; ggml order is its reverse.
struct SafetensorsTensor {
    std::string name;
    std::string dtype; // as written in the header: "F32", "BF16", "I64" ...
    std::optional<TensorType> type; // F32, F16 or BF16; nullopt for other dtypes
    std::vector<std::int64_t> shape;
    std::uint64_t begin = 0; // byte range inside the data region
    std::uint64_t end = 0;
    const std::byte* data = nullptr; // start of the payload (null for a header parsed alone)

    std::uint64_t bytes() const { return end - begin; }
    std::int64_t elements() const;
};

struct SafetensorsHeader {
    std::vector<SafetensorsTensor> tensors; // in the order of their byte ranges
    std::map<std::string, std::string> metadata; // "__metadata__"
    std::uint64_t dataOffset = 0; // start of the data region (8 + header length)
};

// Parses and checks the header of a safetensors buffer: the header length against the
// buffer, the JSON, every dtype, shape and byte range (inside the data region, matching
// shape x dtype, no two overlapping). `name` (a file path) appears in every error. When
// `data` holds the whole file the tensors' data pointers point into it.
Result<SafetensorsHeader> parseSafetensorsHeader(
    const std::byte* data, std::size_t size, const std::string& name);

// Bytes per element of a safetensors dtype ("F32" -> 4); nullopt for an unknown dtype.
std::optional<std::uint32_t> safetensorsDtypeSize(std::string_view dtype);
// The dtype string for a float type (F32 "F32", F16 "F16", BF16 "BF16"); empty otherwise.
std::string_view safetensorsDtypeName(TensorType type);

// A safetensors file, memory-mapped read-only; nothing is read beyond the header until used.
class SafetensorsFile {
public:
    static Result<SafetensorsFile> open(const std::string& path);

    const std::string& path() const { return m_path; }
    const std::vector<SafetensorsTensor>& tensors() const { return m_header.tensors; }
    const std::map<std::string, std::string>& metadata() const { return m_header.metadata; }
    const SafetensorsTensor* find(std::string_view name) const;
    std::shared_ptr<const void> mapping() const { return m_mapping; }

private:
    std::string m_path;
    std::shared_ptr<const void> m_mapping;
    SafetensorsHeader m_header;
    std::map<std::string, std::size_t, std::less<>> m_index;
};

// Maps a whole file read-only. An empty file maps to a null pointer and size 0.
struct MappedFile {
    std::shared_ptr<const void> keepAlive;
    const std::byte* data = nullptr;
    std::size_t size = 0;
};
Result<MappedFile> mapFileReadOnly(const std::string& path);

} // namespace cw::engine
