#include "engine/model_files/safetensors_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <nlohmann/json.hpp>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cw::engine {

namespace {

// A header larger than this is refused before it is parsed (real files: a few MB).
constexpr std::uint64_t kMaxHeaderBytes = 256ull << 20;
constexpr std::size_t kMaxDims = 8;

struct DtypeInfo {
    std::string_view name;
    std::uint32_t size;
};

constexpr DtypeInfo kDtypes[] = {
    { "BOOL", 1 },
    { "U8", 1 },
    { "I8", 1 },
    { "F8_E5M2", 1 },
    { "F8_E4M3", 1 },
    { "I16", 2 },
    { "U16", 2 },
    { "F16", 2 },
    { "BF16", 2 },
    { "I32", 4 },
    { "U32", 4 },
    { "F32", 4 },
    { "F64", 8 },
    { "I64", 8 },
    { "U64", 8 },
};

Error headerError(const std::string& name, const std::string& what)
{
    return makeError(name + ": invalid safetensors header: " + what);
}

std::optional<TensorType> floatType(std::string_view dtype)
{
    if (dtype == "F32")
        return TensorType::F32;
    if (dtype == "F16")
        return TensorType::F16;
    if (dtype == "BF16")
        return TensorType::BF16;
    return std::nullopt;
}

Result<SafetensorsTensor> parseEntry(const std::string& file, const std::string& key,
    const nlohmann::json& entry, std::uint64_t dataSize)
{
    const std::string where = "tensor \"" + key + "\"";
    if (!entry.is_object())
        return headerError(file, where + " is not an object");
    const auto dtypeIt = entry.find("dtype");
    const auto shapeIt = entry.find("shape");
    const auto offsetsIt = entry.find("data_offsets");
    if (dtypeIt == entry.end() || !dtypeIt->is_string())
        return headerError(file, where + " has no dtype string");
    if (shapeIt == entry.end() || !shapeIt->is_array())
        return headerError(file, where + " has no shape array");
    if (offsetsIt == entry.end() || !offsetsIt->is_array() || offsetsIt->size() != 2)
        return headerError(file, where + " has no data_offsets [begin, end]");

    SafetensorsTensor tensor;
    tensor.name = key;
    tensor.dtype = dtypeIt->get<std::string>();
    const auto elementSize = safetensorsDtypeSize(tensor.dtype);
    if (!elementSize)
        return headerError(file, where + " has unknown dtype \"" + tensor.dtype + "\"");
    tensor.type = floatType(tensor.dtype);

    if (shapeIt->size() > kMaxDims)
        return headerError(
            file, where + " has " + std::to_string(shapeIt->size()) + " dimensions (at most 8)");
    std::uint64_t elements = 1;
    bool overflow = false;
    for (const auto& dim : *shapeIt) {
        if (!dim.is_number_unsigned())
            return headerError(file,
                where
                    + " has a shape entry that is not a non-negative "
                      "integer");
        const std::uint64_t n = dim.get<std::uint64_t>();
        if (n > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
            return headerError(file, where + " has an absurd dimension " + std::to_string(n));
        if (n != 0 && elements > std::numeric_limits<std::uint64_t>::max() / n)
            overflow = true;
        else
            elements *= n;
        tensor.shape.push_back(std::int64_t(n));
    }
    for (const auto& offset : *offsetsIt) {
        if (!offset.is_number_unsigned())
            return headerError(file,
                where
                    + " has a data offset that is not a non-negative "
                      "integer");
    }
    tensor.begin = (*offsetsIt)[0].get<std::uint64_t>();
    tensor.end = (*offsetsIt)[1].get<std::uint64_t>();
    if (tensor.begin > tensor.end)
        return headerError(file, where + " has data_offsets with begin after end");
    if (tensor.end > dataSize)
        return headerError(file,
            where + " runs past the end of the file (bytes " + std::to_string(tensor.begin) + ".."
                + std::to_string(tensor.end) + " of a data region of " + std::to_string(dataSize)
                + ")");
    if (overflow || elements > std::numeric_limits<std::uint64_t>::max() / *elementSize
        || elements * *elementSize != tensor.bytes())
        return headerError(file,
            where + " has shape x dtype that does not match its " + std::to_string(tensor.bytes())
                + " bytes");
    return tensor;
}

} // namespace

std::int64_t SafetensorsTensor::elements() const
{
    std::int64_t n = 1;
    for (const auto d : shape)
        n *= d;
    return n;
}

std::optional<std::uint32_t> safetensorsDtypeSize(std::string_view dtype)
{
    for (const auto& info : kDtypes) {
        if (info.name == dtype)
            return info.size;
    }
    return std::nullopt;
}

std::string_view safetensorsDtypeName(TensorType type)
{
    switch (type) {
    case TensorType::F32:
        return "F32";
    case TensorType::F16:
        return "F16";
    case TensorType::BF16:
        return "BF16";
    default:
        return {};
    }
}

Result<SafetensorsHeader> parseSafetensorsHeader(
    const std::byte* data, std::size_t size, const std::string& name)
{
    if (size < 8)
        return makeError(name
            + ": not a safetensors file (shorter than its 8-byte header "
              "length)");
    std::uint64_t headerLength = 0;
    for (int i = 7; i >= 0; --i)
        headerLength = (headerLength << 8) | std::uint64_t(std::uint8_t(data[i]));
    if (headerLength > size - 8)
        return headerError(name,
            "header length " + std::to_string(headerLength) + " exceeds the file size "
                + std::to_string(size));
    if (headerLength > kMaxHeaderBytes)
        return headerError(name, "header length " + std::to_string(headerLength) + " is absurd");
    if (headerLength < 2)
        return headerError(name, "header is empty");

    const char* text = reinterpret_cast<const char*>(data + 8);
    const auto json = nlohmann::json::parse(text, text + headerLength, nullptr, false);
    if (json.is_discarded())
        return headerError(name, "the header is not well-formed JSON");
    if (!json.is_object())
        return headerError(name, "the header is not a JSON object");

    SafetensorsHeader header;
    header.dataOffset = 8 + headerLength;
    const std::uint64_t dataSize = size - header.dataOffset;
    for (const auto& [key, value] : json.items()) {
        if (key == "__metadata__") {
            if (!value.is_object())
                return headerError(name, "__metadata__ is not an object");
            for (const auto& [metaKey, metaValue] : value.items()) {
                if (!metaValue.is_string())
                    return headerError(
                        name, "__metadata__ value \"" + metaKey + "\" is not a string");
                header.metadata[metaKey] = metaValue.get<std::string>();
            }
            continue;
        }
        auto tensor = parseEntry(name, key, value, dataSize);
        if (!tensor)
            return tensor.error();
        header.tensors.push_back(std::move(tensor.value()));
    }

    std::sort(header.tensors.begin(), header.tensors.end(), [](const auto& a, const auto& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
    });
    for (std::size_t i = 1; i < header.tensors.size(); ++i) {
        const auto& previous = header.tensors[i - 1];
        const auto& current = header.tensors[i];
        if (current.begin < previous.end)
            return headerError(
                name, "tensors \"" + previous.name + "\" and \"" + current.name + "\" overlap");
    }
    for (auto& tensor : header.tensors)
        tensor.data = data + header.dataOffset + tensor.begin;
    return header;
}

Result<MappedFile> mapFileReadOnly(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(path + ": cannot open: " + std::strerror(errno));
    struct stat st { };
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return makeError(path + ": not a regular file");
    }
    MappedFile mapped;
    mapped.size = std::size_t(st.st_size);
    if (mapped.size == 0) {
        ::close(fd);
        return mapped;
    }
    void* address = ::mmap(nullptr, mapped.size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int mapErrno = errno;
    ::close(fd);
    if (address == MAP_FAILED)
        return makeError(path + ": cannot memory-map: " + std::strerror(mapErrno));
    const std::size_t length = mapped.size;
    mapped.keepAlive = std::shared_ptr<const void>(
        address, [length](const void* p) { ::munmap(const_cast<void*>(p), length); });
    mapped.data = static_cast<const std::byte*>(address);
    return mapped;
}

Result<SafetensorsFile> SafetensorsFile::open(const std::string& path)
{
    auto mapped = mapFileReadOnly(path);
    if (!mapped)
        return mapped.error();
    auto header = parseSafetensorsHeader(mapped->data, mapped->size, path);
    if (!header)
        return header.error();
    SafetensorsFile file;
    file.m_path = path;
    file.m_mapping = mapped->keepAlive;
    file.m_header = std::move(header.value());
    for (std::size_t i = 0; i < file.m_header.tensors.size(); ++i)
        file.m_index.emplace(file.m_header.tensors[i].name, i);
    return file;
}

const SafetensorsTensor* SafetensorsFile::find(std::string_view tensorName) const
{
    const auto it = m_index.find(tensorName);
    return it == m_index.end() ? nullptr : &m_header.tensors[it->second];
}

} // namespace cw::engine
