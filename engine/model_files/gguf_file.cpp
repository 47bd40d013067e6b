// GGUF reader. Layout (ggml/docs/gguf.md): magic "GGUF", uint32 version, uint64 tensor count,
// uint64 metadata count, the key/value pairs, the tensor infos (name, n_dims, ne[], type,
// offset), padding to the alignment, then the data section. Every count and length is checked
// against the bytes that remain before anything is allocated for it.
#include "engine/model_files/gguf_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cw::engine {

std::string_view ggufTypeName(GgufType type)
{
    static constexpr std::string_view kNames[] = { "uint8", "int8", "uint16", "int16", "uint32",
        "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64" };
    const auto index = std::size_t(type);
    return index < std::size(kNames) ? kNames[index] : std::string_view("unknown");
}

bool GgufValue::isInteger() const
{
    switch (type()) {
    case GgufType::Uint8:
    case GgufType::Int8:
    case GgufType::Uint16:
    case GgufType::Int16:
    case GgufType::Uint32:
    case GgufType::Int32:
    case GgufType::Uint64:
    case GgufType::Int64:
        return true;
    default:
        return false;
    }
}

bool GgufValue::isNumber() const
{
    return isInteger() || type() == GgufType::Float32 || type() == GgufType::Float64;
}

std::optional<std::int64_t> GgufValue::asInt() const
{
    if (const auto* u = std::get_if<std::uint64_t>(&value)) {
        if (*u > std::uint64_t(std::numeric_limits<std::int64_t>::max()))
            return std::nullopt;
        return std::int64_t(*u);
    }
    return std::visit(
        [](const auto& v) -> std::optional<std::int64_t> {
            using V = std::decay_t<decltype(v)>;
            if constexpr (std::is_integral_v<V> && !std::is_same_v<V, bool>)
                return std::int64_t(v);
            else
                return std::nullopt;
        },
        value);
}

std::optional<std::uint64_t> GgufValue::asUint() const
{
    if (const auto* u = std::get_if<std::uint64_t>(&value))
        return *u;
    const auto i = asInt();
    if (!i || *i < 0)
        return std::nullopt;
    return std::uint64_t(*i);
}

std::optional<double> GgufValue::asDouble() const
{
    if (const auto* f = std::get_if<float>(&value))
        return double(*f);
    if (const auto* d = std::get_if<double>(&value))
        return *d;
    if (const auto* u = std::get_if<std::uint64_t>(&value))
        return double(*u);
    if (const auto i = asInt())
        return double(*i);
    return std::nullopt;
}

const std::string* GgufValue::asString() const
{
    return std::get_if<std::string>(&value);
}

const GgufArray* GgufValue::asArray() const
{
    return std::get_if<GgufArray>(&value);
}

std::optional<bool> GgufValue::asBool() const
{
    if (const auto* b = std::get_if<bool>(&value))
        return *b;
    return std::nullopt;
}

// Parses a buffer into a GgufFile; stops at the first problem and names it.
class GgufParser {
public:
    GgufParser(const std::byte* data, std::uint64_t size, const std::string& name)
        : m_data(data)
        , m_size(size)
        , m_name(name)
    {
    }

    Result<void> parse(GgufFile& file);

private:
    static constexpr int kMaxArrayDepth = 4;
    static constexpr std::uint64_t kMaxStringBytes = std::uint64_t(1) << 30;

    Error fail(const std::string& problem) const { return makeError(m_name + ": " + problem); }
    std::uint64_t remaining() const { return m_size - m_pos; }

    bool take(void* dst, std::uint64_t n)
    {
        if (remaining() < n)
            return false;
        std::memcpy(dst, m_data + m_pos, n);
        m_pos += n;
        return true;
    }
    template <typename T> Result<T> read(const std::string& what)
    {
        T value {};
        if (!take(&value, sizeof(T)))
            return truncated(what, sizeof(T));
        return value;
    }
    // The same, with the label "<prefix><what>" built only when the read fails (hot path).
    template <typename T> Result<T> read(std::string_view prefix, const std::string& what)
    {
        T value {};
        if (!take(&value, sizeof(T)))
            return truncated(std::string(prefix) + what, sizeof(T));
        return value;
    }
    Error truncated(const std::string& what, std::uint64_t needed) const
    {
        return fail("truncated file: " + what + " needs " + std::to_string(needed)
            + " bytes at offset " + std::to_string(m_pos) + ", only " + std::to_string(remaining())
            + " remain");
    }
    Result<std::string> readString(const std::string& what);
    Result<GgufValue> readValue(GgufType type, const std::string& what, int depth);
    Result<GgufArray> readArray(const std::string& what, int depth);
    static std::uint64_t minimumBytes(GgufType type);

    const std::byte* m_data;
    std::uint64_t m_size;
    std::uint64_t m_pos = 0;
    const std::string& m_name;
};

std::uint64_t GgufParser::minimumBytes(GgufType type)
{
    switch (type) {
    case GgufType::Uint8:
    case GgufType::Int8:
    case GgufType::Bool:
        return 1;
    case GgufType::Uint16:
    case GgufType::Int16:
        return 2;
    case GgufType::Uint32:
    case GgufType::Int32:
    case GgufType::Float32:
        return 4;
    case GgufType::String:
    case GgufType::Uint64:
    case GgufType::Int64:
    case GgufType::Float64:
        return 8;
    case GgufType::Array:
        return 12;
    }
    return 1;
}

Result<std::string> GgufParser::readString(const std::string& what)
{
    auto length = read<std::uint64_t>("the length of ", what);
    if (!length)
        return length.error();
    if (*length > remaining() || *length > kMaxStringBytes) {
        return fail("string length " + std::to_string(*length) + " of " + what + " at offset "
            + std::to_string(m_pos - 8) + " runs past the end of the file ("
            + std::to_string(remaining()) + " bytes remain)");
    }
    std::string s(reinterpret_cast<const char*>(m_data + m_pos), std::size_t(*length));
    m_pos += *length;
    return s;
}

Result<GgufArray> GgufParser::readArray(const std::string& what, int depth)
{
    if (depth >= kMaxArrayDepth)
        return fail(what + ": arrays nested deeper than " + std::to_string(kMaxArrayDepth));
    auto elementType = read<std::uint32_t>("the element type of ", what);
    if (!elementType)
        return elementType.error();
    if (*elementType > std::uint32_t(GgufType::Float64))
        return fail(what + ": unknown array element type " + std::to_string(*elementType));
    auto count = read<std::uint64_t>("the length of ", what);
    if (!count)
        return count.error();
    const auto type = GgufType(*elementType);
    if (*count > remaining() / minimumBytes(type)) {
        return fail(what + ": array of " + std::to_string(*count) + " "
            + std::string(ggufTypeName(type)) + " values cannot fit in the "
            + std::to_string(remaining()) + " bytes that remain");
    }
    GgufArray array;
    array.elementType = type;
    array.values.reserve(std::size_t(*count));
    for (std::uint64_t i = 0; i < *count; ++i) {
        auto v = readValue(type, what, depth + 1);
        if (!v)
            return makeError(v.error().message + " (array element " + std::to_string(i) + ")");
        array.values.push_back(std::move(*v));
    }
    return array;
}

Result<GgufValue> GgufParser::readValue(GgufType type, const std::string& what, int depth)
{
    GgufValue v;
    auto scalar = [&](auto tag) -> Result<GgufValue> {
        using T = decltype(tag);
        auto r = read<T>("", what);
        if (!r)
            return r.error();
        v.value = *r;
        return v;
    };
    switch (type) {
    case GgufType::Uint8:
        return scalar(std::uint8_t {});
    case GgufType::Int8:
        return scalar(std::int8_t {});
    case GgufType::Uint16:
        return scalar(std::uint16_t {});
    case GgufType::Int16:
        return scalar(std::int16_t {});
    case GgufType::Uint32:
        return scalar(std::uint32_t {});
    case GgufType::Int32:
        return scalar(std::int32_t {});
    case GgufType::Float32:
        return scalar(float {});
    case GgufType::Uint64:
        return scalar(std::uint64_t {});
    case GgufType::Int64:
        return scalar(std::int64_t {});
    case GgufType::Float64:
        return scalar(double {});
    case GgufType::Bool: {
        auto r = read<std::uint8_t>("", what);
        if (!r)
            return r.error();
        if (*r > 1)
            return fail(what + ": bool value " + std::to_string(*r) + " is neither 0 nor 1");
        v.value = *r == 1;
        return v;
    }
    case GgufType::String: {
        auto s = readString(what);
        if (!s)
            return s.error();
        v.value = std::move(*s);
        return v;
    }
    case GgufType::Array: {
        auto a = readArray(what, depth);
        if (!a)
            return a.error();
        v.value = std::move(*a);
        return v;
    }
    }
    return fail(what + ": unknown value type " + std::to_string(std::uint32_t(type)));
}

Result<void> GgufParser::parse(GgufFile& file)
{
    char magic[4];
    if (!take(magic, 4))
        return truncated("the magic", 4);
    if (std::memcmp(magic, "GGUF", 4) != 0)
        return fail("not a GGUF file (the first 4 bytes are not \"GGUF\")");
    auto version = read<std::uint32_t>("the version");
    if (!version)
        return version.error();
    if (*version == 1)
        return fail(
            "GGUF version 1 is not supported (re-convert the model with a current llama.cpp)");
    if (*version != 2 && *version != 3) {
        if ((*version & 0xFFFF) == 0 && *version != 0)
            return fail("GGUF file of the other byte order (big-endian) is not supported");
        return fail("unsupported GGUF version " + std::to_string(*version) + " (2 and 3 are)");
    }
    file.m_version = *version;
    auto tensorCount = read<std::uint64_t>("the tensor count");
    if (!tensorCount)
        return tensorCount.error();
    auto kvCount = read<std::uint64_t>("the metadata count");
    if (!kvCount)
        return kvCount.error();
    // A key/value needs at least 8 (key length) + 4 (type) + 1 bytes; a tensor info 8 + 4 + 8 + 4
    // + 8.
    if (*kvCount > remaining() / 13)
        return fail("metadata count " + std::to_string(*kvCount) + " cannot fit in the "
            + std::to_string(remaining()) + " bytes that remain (truncated file or corrupt count)");
    if (*tensorCount > remaining() / 32)
        return fail("tensor count " + std::to_string(*tensorCount) + " cannot fit in the "
            + std::to_string(remaining()) + " bytes that remain (truncated file or corrupt count)");

    file.m_metadata.reserve(std::size_t(*kvCount));
    for (std::uint64_t i = 0; i < *kvCount; ++i) {
        auto key = readString("metadata key " + std::to_string(i));
        if (!key)
            return key.error();
        if (file.m_metadataIndex.count(*key))
            return fail("duplicate metadata key \"" + *key + "\"");
        auto type = read<std::uint32_t>("the type of metadata \"" + *key + "\"");
        if (!type)
            return type.error();
        if (*type > std::uint32_t(GgufType::Float64))
            return fail(
                "metadata \"" + *key + "\" has unknown value type " + std::to_string(*type));
        auto value = readValue(GgufType(*type), "metadata \"" + *key + "\"", 0);
        if (!value)
            return value.error();
        file.m_metadataIndex.emplace(*key, file.m_metadata.size());
        file.m_metadata.push_back({ std::move(*key), std::move(*value) });
    }

    if (const auto* alignment = file.find("general.alignment")) {
        const auto a = alignment->asUint();
        if (alignment->type() != GgufType::Uint32 || !a || *a == 0 || (*a & (*a - 1)) != 0)
            return fail("general.alignment must be a uint32 power of two");
        file.m_alignment = *a;
    }

    file.m_tensors.reserve(std::size_t(*tensorCount));
    for (std::uint64_t i = 0; i < *tensorCount; ++i) {
        const std::string label = "tensor info " + std::to_string(i);
        auto name = readString("the name of " + label);
        if (!name)
            return name.error();
        const std::string what = "tensor \"" + *name + "\"";
        if (file.m_tensorIndex.count(*name))
            return fail("duplicate tensor name \"" + *name + "\"");
        GgufTensorInfo info;
        info.name = std::move(*name);
        auto nDims = read<std::uint32_t>("the dimension count of " + what);
        if (!nDims)
            return nDims.error();
        if (*nDims == 0 || *nDims > 4)
            return fail(what + " has " + std::to_string(*nDims) + " dimensions (1 to 4 allowed)");
        info.nDims = int(*nDims);
        for (std::uint32_t d = 0; d < *nDims; ++d) {
            auto ne = read<std::uint64_t>("dimension " + std::to_string(d) + " of " + what);
            if (!ne)
                return ne.error();
            if (*ne == 0 || *ne > (std::uint64_t(1) << 40))
                return fail(what + " has a zero or absurd dimension " + std::to_string(d) + " of "
                    + std::to_string(*ne));
            info.ne[d] = std::int64_t(*ne);
        }
        auto type = read<std::uint32_t>("the type of " + what);
        if (!type)
            return type.error();
        const auto traits = kernels::tensorTypeTraits(*type);
        if (!traits)
            return fail(what + " has unknown or unsupported tensor type " + std::to_string(*type));
        info.type = TensorType(*type);
        auto offset = read<std::uint64_t>("the offset of " + what);
        if (!offset)
            return offset.error();
        info.offset = *offset;
        if (info.ne[0] % traits->blockSize != 0) {
            return fail(what + ": row length " + std::to_string(info.ne[0])
                + " is not a multiple of the " + std::string(traits->name) + " block size "
                + std::to_string(traits->blockSize));
        }
        // Total bytes, with overflow checks (each dimension is at most 2^40).
        std::uint64_t bytes = std::uint64_t(info.ne[0]) / traits->blockSize * traits->blockBytes;
        bool overflow = false;
        for (int d = 1; d < 4; ++d)
            overflow = overflow || __builtin_mul_overflow(bytes, std::uint64_t(info.ne[d]), &bytes);
        if (overflow || bytes > m_size)
            return fail(what + " needs more bytes than the whole file has");
        info.bytes = bytes;
        if (info.offset % file.m_alignment != 0)
            return fail(what + ": offset " + std::to_string(info.offset)
                + " is not a multiple of the alignment " + std::to_string(file.m_alignment));
        file.m_tensorIndex.emplace(info.name, file.m_tensors.size());
        file.m_tensors.push_back(std::move(info));
    }

    const std::uint64_t dataOffset
        = (m_pos + file.m_alignment - 1) / file.m_alignment * file.m_alignment;
    if (dataOffset > m_size && !file.m_tensors.empty())
        return fail("truncated file: the data section would start at " + std::to_string(dataOffset)
            + " past the end (" + std::to_string(m_size) + " bytes)");
    file.m_dataOffset = dataOffset;
    const std::uint64_t dataSize = m_size > dataOffset ? m_size - dataOffset : 0;

    std::vector<const GgufTensorInfo*> byOffset;
    byOffset.reserve(file.m_tensors.size());
    for (auto& info : file.m_tensors) {
        if (info.offset > dataSize || info.bytes > dataSize - info.offset) {
            return fail("tensor \"" + info.name + "\" (offset " + std::to_string(info.offset) + ", "
                + std::to_string(info.bytes)
                + " bytes) runs past the end of the file (data section of "
                + std::to_string(dataSize) + " bytes)");
        }
        info.data = m_data + dataOffset + info.offset;
        byOffset.push_back(&info);
    }
    std::sort(byOffset.begin(), byOffset.end(),
        [](const auto* a, const auto* b) { return a->offset < b->offset; });
    for (std::size_t i = 1; i < byOffset.size(); ++i) {
        const auto* prev = byOffset[i - 1];
        if (byOffset[i]->offset < prev->offset + prev->bytes) {
            return fail("tensors \"" + prev->name + "\" and \"" + byOffset[i]->name
                + "\" overlap (offsets " + std::to_string(prev->offset) + "+"
                + std::to_string(prev->bytes) + " and " + std::to_string(byOffset[i]->offset)
                + ")");
        }
    }
    return {};
}

Result<GgufFile> GgufFile::fromMemory(const void* data, std::size_t size, std::string name)
{
    GgufFile file;
    file.m_path = std::move(name);
    file.m_data = static_cast<const std::byte*>(data);
    file.m_size = size;
    GgufParser parser(file.m_data, size, file.m_path);
    auto ok = parser.parse(file);
    if (!ok)
        return ok.error();
    return file;
}

Result<GgufFile> GgufFile::open(const std::string& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return makeError(path + ": cannot open: " + std::strerror(errno));
    struct stat st { };
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return makeError(path + ": not a regular file");
    }
    const auto size = std::uint64_t(st.st_size);
    if (size == 0) {
        ::close(fd);
        return makeError(path + ": empty file, not a GGUF model");
    }
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED)
        return makeError(path + ": cannot map the file: " + std::strerror(errno));
    std::shared_ptr<const void> mapping(
        map, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
    auto file = fromMemory(map, size, path);
    if (!file)
        return file.error();
    file->m_mapping = std::move(mapping);
    return file;
}

const GgufValue* GgufFile::find(std::string_view key) const
{
    const auto it = m_metadataIndex.find(key);
    return it == m_metadataIndex.end() ? nullptr : &m_metadata[it->second].value;
}

std::optional<std::int64_t> GgufFile::getInt(std::string_view key) const
{
    const auto* v = find(key);
    return v && v->isInteger() ? v->asInt() : std::nullopt;
}

std::optional<std::uint64_t> GgufFile::getUint(std::string_view key) const
{
    const auto* v = find(key);
    return v && v->isInteger() ? v->asUint() : std::nullopt;
}

std::optional<double> GgufFile::getDouble(std::string_view key) const
{
    const auto* v = find(key);
    return v ? v->asDouble() : std::nullopt;
}

std::optional<bool> GgufFile::getBool(std::string_view key) const
{
    const auto* v = find(key);
    return v ? v->asBool() : std::nullopt;
}

std::optional<std::string> GgufFile::getString(std::string_view key) const
{
    const auto* v = find(key);
    const auto* s = v ? v->asString() : nullptr;
    return s ? std::optional<std::string>(*s) : std::nullopt;
}

const GgufArray* GgufFile::getArray(std::string_view key) const
{
    const auto* v = find(key);
    return v ? v->asArray() : nullptr;
}

std::optional<std::vector<std::string>> GgufFile::getStringArray(std::string_view key) const
{
    const auto* a = getArray(key);
    if (!a || a->elementType != GgufType::String)
        return std::nullopt;
    std::vector<std::string> out;
    out.reserve(a->values.size());
    for (const auto& v : a->values)
        out.push_back(*v.asString());
    return out;
}

std::optional<std::vector<std::int64_t>> GgufFile::getIntArray(std::string_view key) const
{
    const auto* a = getArray(key);
    if (!a)
        return std::nullopt;
    std::vector<std::int64_t> out;
    out.reserve(a->values.size());
    for (const auto& v : a->values) {
        const auto i = v.isInteger() ? v.asInt() : std::nullopt;
        if (!i)
            return std::nullopt;
        out.push_back(*i);
    }
    return out;
}

Result<std::int64_t> GgufFile::requireInt(std::string_view key) const
{
    const auto* v = find(key);
    if (!v)
        return makeError(m_path + ": missing metadata \"" + std::string(key) + "\"");
    const auto i = v->isInteger() ? v->asInt() : std::nullopt;
    if (!i)
        return makeError(m_path + ": metadata \"" + std::string(key)
            + "\" should be an integer, is " + std::string(ggufTypeName(v->type())));
    return *i;
}

Result<double> GgufFile::requireDouble(std::string_view key) const
{
    const auto* v = find(key);
    if (!v)
        return makeError(m_path + ": missing metadata \"" + std::string(key) + "\"");
    const auto d = v->asDouble();
    if (!d)
        return makeError(m_path + ": metadata \"" + std::string(key) + "\" should be a number, is "
            + std::string(ggufTypeName(v->type())));
    return *d;
}

Result<std::string> GgufFile::requireString(std::string_view key) const
{
    const auto* v = find(key);
    if (!v)
        return makeError(m_path + ": missing metadata \"" + std::string(key) + "\"");
    const auto* s = v->asString();
    if (!s)
        return makeError(m_path + ": metadata \"" + std::string(key) + "\" should be a string, is "
            + std::string(ggufTypeName(v->type())));
    return *s;
}

const GgufTensorInfo* GgufFile::findTensor(std::string_view name) const
{
    const auto it = m_tensorIndex.find(name);
    return it == m_tensorIndex.end() ? nullptr : &m_tensors[it->second];
}

} // namespace cw::engine
