#pragma once

#include "engine/common/result.h"
#include "kernels/tensor_type.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cw::engine {

using kernels::TensorType;

// GGUF metadata value types, numbered as in the GGUF specification.
enum class GgufType : std::uint32_t {
    Uint8 = 0,
    Int8 = 1,
    Uint16 = 2,
    Int16 = 3,
    Uint32 = 4,
    Int32 = 5,
    Float32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    Uint64 = 10,
    Int64 = 11,
    Float64 = 12,
};

std::string_view ggufTypeName(GgufType type);

struct GgufValue;

struct GgufArray {
    GgufType elementType = GgufType::Uint8;
    std::vector<GgufValue> values;
};

// One metadata value. The variant's alternative index equals the GgufType number.
struct GgufValue {
    using Storage
        = std::variant<std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, std::uint32_t,
            std::int32_t, float, bool, std::string, GgufArray, std::uint64_t, std::int64_t, double>;
    Storage value;

    GgufType type() const { return GgufType(value.index()); }
    bool isInteger() const;
    bool isNumber() const; // integer or float
    // Conversions that succeed only when the value fits (signed/unsigned checked).
    std::optional<std::int64_t> asInt() const;
    std::optional<std::uint64_t> asUint() const;
    std::optional<double> asDouble() const; // any number
    const std::string* asString() const;
    const GgufArray* asArray() const;
    std::optional<bool> asBool() const;
};

struct GgufKeyValue {
    std::string key;
    GgufValue value;
};

struct GgufTensorInfo {
    std::string name;
    int nDims = 0;
    std::array<std::int64_t, 4> ne { 1, 1, 1, 1 }; // ggml order: ne[0] contiguous
    TensorType type = TensorType::F32;
    std::uint64_t offset = 0; // relative to the start of the data section
    std::uint64_t bytes = 0;
    const std::byte* data = nullptr; // into the mapping

    std::int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

// A GGUF (v2 or v3) file, memory-mapped read-only. open() parses and checks the header,
// the metadata and the tensor infos (every count and length against the bytes that remain,
// every tensor inside the file, no two overlapping); tensor data is not read until used.
class GgufFile {
public:
    static Result<GgufFile> open(const std::string& path);
    // Parses a buffer the caller keeps alive (fuzzing, tests). `name` appears in errors.
    static Result<GgufFile> fromMemory(const void* data, std::size_t size, std::string name);

    const std::string& path() const { return m_path; }
    std::uint32_t version() const { return m_version; }
    std::uint64_t alignment() const { return m_alignment; }
    std::uint64_t dataOffset() const { return m_dataOffset; } // start of the data section
    std::uint64_t fileSize() const { return m_size; }
    const std::byte* fileData() const { return m_data; }

    const std::vector<GgufKeyValue>& metadata() const { return m_metadata; }
    const GgufValue* find(std::string_view key) const;
    std::optional<std::int64_t> getInt(std::string_view key) const;
    std::optional<std::uint64_t> getUint(std::string_view key) const;
    std::optional<double> getDouble(std::string_view key) const;
    std::optional<bool> getBool(std::string_view key) const;
    std::optional<std::string> getString(std::string_view key) const;
    const GgufArray* getArray(std::string_view key) const;
    // Arrays as plain vectors; nullopt when the key is absent or of another element type.
    std::optional<std::vector<std::string>> getStringArray(std::string_view key) const;
    std::optional<std::vector<std::int64_t>> getIntArray(std::string_view key) const;
    // Required values: an error naming the file and the key when absent or mistyped.
    Result<std::int64_t> requireInt(std::string_view key) const;
    Result<double> requireDouble(std::string_view key) const;
    Result<std::string> requireString(std::string_view key) const;

    const std::vector<GgufTensorInfo>& tensors() const { return m_tensors; }
    const GgufTensorInfo* findTensor(std::string_view name) const;

    // Keeps the mapping alive for views that outlive this object (ModelDescription::storage).
    std::shared_ptr<const void> mapping() const { return m_mapping; }

private:
    friend class GgufParser;
    std::string m_path;
    std::shared_ptr<const void> m_mapping;
    const std::byte* m_data = nullptr;
    std::uint64_t m_size = 0;
    std::uint32_t m_version = 0;
    std::uint64_t m_alignment = 32;
    std::uint64_t m_dataOffset = 0;
    std::vector<GgufKeyValue> m_metadata;
    std::map<std::string, std::size_t, std::less<>> m_metadataIndex;
    std::vector<GgufTensorInfo> m_tensors;
    std::map<std::string, std::size_t, std::less<>> m_tensorIndex;
};

} // namespace cw::engine
