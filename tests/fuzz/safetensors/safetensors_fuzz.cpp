// libFuzzer target: the safetensors header parser must refuse any malformed buffer with an
// error, never crash, read out of bounds or allocate by an unchecked field.
#include "engine/model_files/safetensors_file.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto* bytes = reinterpret_cast<const std::byte*>(data);
    auto header = cw::engine::parseSafetensorsHeader(bytes, size, "fuzz.safetensors");
    if (header) {
        // Every accepted tensor lies inside the buffer.
        for (const auto& tensor : header->tensors) {
            if (tensor.bytes() > 0) {
                volatile std::byte first = tensor.data[0];
                volatile std::byte last = tensor.data[tensor.bytes() - 1];
                (void)first;
                (void)last;
            }
        }
    }
    return 0;
}
