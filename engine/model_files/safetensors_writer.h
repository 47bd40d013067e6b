#pragma once

#include "engine/common/result.h"
#include "kernels/tensor_type.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cw::engine {

using kernels::TensorType;

// Writes a safetensors file (header JSON padded to 8 bytes, then the tensors back to back in
// the order added). Used by tests to build Hugging Face folders and by tools.
class SafetensorsWriter {
public:
    // shape in PyTorch order (outermost first); data holds exactly shape x dtype bytes.
    void add(const std::string& name, TensorType type, std::vector<std::int64_t> shape,
        std::vector<std::byte> data);
    // Stores float values as `type` (F32, F16 or BF16, rounded to nearest even).
    void addFloats(const std::string& name, TensorType type, std::vector<std::int64_t> shape,
        const std::vector<float>& values);
    void setMetadata(const std::string& key, const std::string& value);

    std::vector<std::byte> toBytes() const;
    Result<void> write(const std::string& path) const;

private:
    struct Entry {
        std::string name;
        TensorType type;
        std::vector<std::int64_t> shape;
        std::vector<std::byte> data;
    };
    std::vector<Entry> m_entries;
    std::map<std::string, std::string> m_metadata;
};

} // namespace cw::engine
