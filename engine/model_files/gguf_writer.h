#pragma once

#include "engine/common/result.h"
#include "engine/model_files/gguf_file.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cw::engine {

// Writes a GGUF v3 file: metadata in insertion order, tensor infos, then each tensor's data
// at an offset aligned to general.alignment (32 unless set). Tensor data comes from a
// pointer the caller keeps alive until write(), from an owned buffer, or from a callback
// that fills one tensor at a time (so converting a large model needs one tensor of memory).
class GgufWriter {
public:
    using Fill = std::function<Result<void>(std::byte* dst, std::uint64_t bytes)>;

    explicit GgufWriter(std::uint32_t alignment = 32);

    void set(const std::string& key, GgufValue value); // replaces an existing key
    void setString(const std::string& key, std::string value);
    void setUint32(const std::string& key, std::uint32_t value);
    void setInt32(const std::string& key, std::int32_t value);
    void setUint64(const std::string& key, std::uint64_t value);
    void setFloat32(const std::string& key, float value);
    void setBool(const std::string& key, bool value);
    void setStringArray(const std::string& key, const std::vector<std::string>& values);
    void setInt32Array(const std::string& key, const std::vector<std::int32_t>& values);
    void setFloat32Array(const std::string& key, const std::vector<float>& values);

    // ne in ggml order (ne[0] contiguous), 1 to 4 dimensions; bytes must equal the size the
    // type and shape imply (checked by write()).
    void addTensor(const std::string& name, TensorType type, std::vector<std::int64_t> ne,
        const void* data, std::uint64_t bytes);
    void addTensor(const std::string& name, TensorType type, std::vector<std::int64_t> ne,
        std::vector<std::byte> data);
    void addTensor(
        const std::string& name, TensorType type, std::vector<std::int64_t> ne, Fill fill);

    struct Options {
        // Leave tensor payloads as a hole (the file is extended with ftruncate): for
        // benchmarks of opening large files without writing gigabytes.
        bool sparsePayload = false;
    };
    Result<void> write(const std::string& path) const { return write(path, Options {}); }
    Result<void> write(const std::string& path, const Options& options) const;
    Result<std::vector<std::byte>> toBytes() const; // the whole file in memory

    std::size_t tensorCount() const { return m_tensors.size(); }

private:
    struct PendingTensor {
        std::string name;
        TensorType type;
        std::vector<std::int64_t> ne;
        const void* borrowed = nullptr;
        std::uint64_t bytes = 0;
        std::vector<std::byte> owned;
        Fill fill;
    };
    Result<std::vector<std::byte>> header(std::vector<std::uint64_t>& offsets,
        std::vector<std::uint64_t>& sizes, std::uint64_t& totalSize) const;

    std::uint32_t m_alignment;
    std::vector<GgufKeyValue> m_metadata;
    std::vector<PendingTensor> m_tensors;
};

} // namespace cw::engine
