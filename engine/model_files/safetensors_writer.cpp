#include "engine/model_files/safetensors_writer.h"

#include "engine/model_files/safetensors_file.h"
#include "kernels/cpu/quant/quant_blocks.h"

#include <cassert>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

namespace cw::engine {

namespace {

// binary32 -> binary16, round to nearest even (kept here so this writer needs no kernels).
std::uint16_t toHalf(float value)
{
    std::uint32_t bits;
    std::memcpy(&bits, &value, 4);
    const std::uint32_t sign = (bits >> 16) & 0x8000u;
    const std::uint32_t absBits = bits & 0x7fffffffu;
    if (absBits > 0x7f800000u)
        return std::uint16_t(sign | 0x7e00u);
    if (absBits >= 0x477ff000u) // rounds to infinity
        return std::uint16_t(sign | 0x7c00u);
    if (absBits < 0x38800000u) { // subnormal or zero in binary16
        float magnitude;
        std::memcpy(&magnitude, &absBits, 4);
        const float scaled = magnitude * 16777216.0f; // 2^24: units of the smallest subnormal
        const auto rounded = std::uint32_t(std::nearbyint(scaled));
        return std::uint16_t(sign | rounded);
    }
    const std::uint32_t mantissaOdd = (absBits >> 13) & 1u;
    const std::uint32_t rounded = absBits + 0xfffu + mantissaOdd;
    return std::uint16_t(sign | ((rounded - 0x38000000u) >> 13));
}

} // namespace

void SafetensorsWriter::add(const std::string& name, TensorType type,
    std::vector<std::int64_t> shape, std::vector<std::byte> data)
{
    m_entries.push_back({ name, type, std::move(shape), std::move(data) });
}

void SafetensorsWriter::addFloats(const std::string& name, TensorType type,
    std::vector<std::int64_t> shape, const std::vector<float>& values)
{
    std::vector<std::byte> data;
    if (type == TensorType::F32) {
        data.resize(values.size() * 4);
        std::memcpy(data.data(), values.data(), data.size());
    } else {
        assert(type == TensorType::F16 || type == TensorType::BF16);
        data.resize(values.size() * 2);
        for (std::size_t i = 0; i < values.size(); ++i) {
            const std::uint16_t bits = type == TensorType::BF16
                ? kernels::quant::fp32ToBf16(values[i])
                : toHalf(values[i]);
            std::memcpy(data.data() + 2 * i, &bits, 2);
        }
    }
    add(name, type, std::move(shape), std::move(data));
}

void SafetensorsWriter::setMetadata(const std::string& key, const std::string& value)
{
    m_metadata[key] = value;
}

std::vector<std::byte> SafetensorsWriter::toBytes() const
{
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    if (!m_metadata.empty())
        header["__metadata__"] = m_metadata;
    std::uint64_t offset = 0;
    for (const auto& entry : m_entries) {
        header[entry.name] = { { "dtype", std::string(safetensorsDtypeName(entry.type)) },
            { "shape", entry.shape }, { "data_offsets", { offset, offset + entry.data.size() } } };
        offset += entry.data.size();
    }
    std::string text = header.dump();
    while (text.size() % 8 != 0)
        text.push_back(' ');
    std::vector<std::byte> bytes(8 + text.size() + offset);
    const std::uint64_t length = text.size();
    for (int i = 0; i < 8; ++i)
        bytes[std::size_t(i)] = std::byte((length >> (8 * i)) & 0xffu);
    std::memcpy(bytes.data() + 8, text.data(), text.size());
    std::size_t position = 8 + text.size();
    for (const auto& entry : m_entries) {
        if (!entry.data.empty())
            std::memcpy(bytes.data() + position, entry.data.data(), entry.data.size());
        position += entry.data.size();
    }
    return bytes;
}

Result<void> SafetensorsWriter::write(const std::string& path) const
{
    const auto bytes = toBytes();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out)
        return makeError(path + ": cannot create");
    out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    if (!out)
        return makeError(path + ": write failed");
    return {};
}

} // namespace cw::engine
