#include "engine/model_files/gguf_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <unistd.h>

namespace cw::engine {
namespace {

class ByteSink {
public:
    explicit ByteSink(std::vector<std::byte>& out)
        : m_out(out)
    {
    }
    void raw(const void* p, std::size_t n)
    {
        const auto* b = static_cast<const std::byte*>(p);
        m_out.insert(m_out.end(), b, b + n);
    }
    template <typename T> void pod(T v) { raw(&v, sizeof v); }
    void string(const std::string& s)
    {
        pod<std::uint64_t>(s.size());
        raw(s.data(), s.size());
    }
    void value(const GgufValue& v)
    {
        std::visit(
            [&](const auto& x) {
                using X = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<X, std::string>) {
                    string(x);
                } else if constexpr (std::is_same_v<X, GgufArray>) {
                    pod<std::uint32_t>(std::uint32_t(x.elementType));
                    pod<std::uint64_t>(x.values.size());
                    for (const auto& item : x.values)
                        value(item);
                } else if constexpr (std::is_same_v<X, bool>) {
                    pod<std::uint8_t>(x ? 1 : 0);
                } else {
                    pod<X>(x);
                }
            },
            v.value);
    }

private:
    std::vector<std::byte>& m_out;
};

std::uint64_t alignUp(std::uint64_t v, std::uint64_t a)
{
    return (v + a - 1) / a * a;
}

bool arrayIsConsistent(const GgufValue& v)
{
    const auto* a = v.asArray();
    if (!a)
        return true;
    for (const auto& item : a->values) {
        if (item.type() != a->elementType || !arrayIsConsistent(item))
            return false;
    }
    return true;
}

} // namespace

GgufWriter::GgufWriter(std::uint32_t alignment)
    : m_alignment(alignment == 0 ? 32 : alignment)
{
    if (m_alignment != 32)
        setUint32("general.alignment", m_alignment);
}

void GgufWriter::set(const std::string& key, GgufValue value)
{
    if (key == "general.alignment") {
        if (const auto a = value.asUint(); a && *a > 0 && *a <= 0xFFFFFFFFu)
            m_alignment = std::uint32_t(*a);
    }
    for (auto& kv : m_metadata) {
        if (kv.key == key) {
            kv.value = std::move(value);
            return;
        }
    }
    m_metadata.push_back({ key, std::move(value) });
}

void GgufWriter::setString(const std::string& key, std::string value)
{
    set(key, GgufValue { std::move(value) });
}
void GgufWriter::setUint32(const std::string& key, std::uint32_t value)
{
    set(key, GgufValue { value });
}
void GgufWriter::setInt32(const std::string& key, std::int32_t value)
{
    set(key, GgufValue { value });
}
void GgufWriter::setUint64(const std::string& key, std::uint64_t value)
{
    set(key, GgufValue { value });
}
void GgufWriter::setFloat32(const std::string& key, float value)
{
    set(key, GgufValue { value });
}
void GgufWriter::setBool(const std::string& key, bool value)
{
    set(key, GgufValue { value });
}

void GgufWriter::setStringArray(const std::string& key, const std::vector<std::string>& values)
{
    GgufArray a { GgufType::String, {} };
    a.values.reserve(values.size());
    for (const auto& s : values)
        a.values.push_back(GgufValue { s });
    set(key, GgufValue { std::move(a) });
}

void GgufWriter::setInt32Array(const std::string& key, const std::vector<std::int32_t>& values)
{
    GgufArray a { GgufType::Int32, {} };
    a.values.reserve(values.size());
    for (auto v : values)
        a.values.push_back(GgufValue { v });
    set(key, GgufValue { std::move(a) });
}

void GgufWriter::setFloat32Array(const std::string& key, const std::vector<float>& values)
{
    GgufArray a { GgufType::Float32, {} };
    a.values.reserve(values.size());
    for (auto v : values)
        a.values.push_back(GgufValue { v });
    set(key, GgufValue { std::move(a) });
}

void GgufWriter::addTensor(const std::string& name, TensorType type, std::vector<std::int64_t> ne,
    const void* data, std::uint64_t bytes)
{
    m_tensors.push_back({ name, type, std::move(ne), data, bytes, {}, {} });
}

void GgufWriter::addTensor(const std::string& name, TensorType type, std::vector<std::int64_t> ne,
    std::vector<std::byte> data)
{
    const auto bytes = std::uint64_t(data.size());
    m_tensors.push_back({ name, type, std::move(ne), nullptr, bytes, std::move(data), {} });
}

void GgufWriter::addTensor(
    const std::string& name, TensorType type, std::vector<std::int64_t> ne, Fill fill)
{
    m_tensors.push_back({ name, type, std::move(ne), nullptr, 0, {}, std::move(fill) });
}

Result<std::vector<std::byte>> GgufWriter::header(std::vector<std::uint64_t>& offsets,
    std::vector<std::uint64_t>& sizes, std::uint64_t& totalSize) const
{
    std::vector<std::byte> out;
    ByteSink sink(out);
    sink.raw("GGUF", 4);
    sink.pod<std::uint32_t>(3);
    sink.pod<std::uint64_t>(m_tensors.size());
    sink.pod<std::uint64_t>(m_metadata.size());
    for (const auto& kv : m_metadata) {
        if (!arrayIsConsistent(kv.value))
            return makeError("GGUF writer: metadata \"" + kv.key
                + "\" has array items of another type than the array's");
        sink.string(kv.key);
        sink.pod<std::uint32_t>(std::uint32_t(kv.value.type()));
        sink.value(kv.value);
    }
    std::set<std::string> names;
    std::uint64_t offset = 0;
    offsets.clear();
    sizes.clear();
    for (auto& t : m_tensors) {
        if (!names.insert(t.name).second)
            return makeError("GGUF writer: duplicate tensor name \"" + t.name + "\"");
        if (t.ne.empty() || t.ne.size() > 4)
            return makeError("GGUF writer: tensor \"" + t.name + "\" must have 1 to 4 dimensions");
        std::uint64_t elementsPastRow = 1;
        for (std::size_t d = 0; d < t.ne.size(); ++d) {
            if (t.ne[d] <= 0)
                return makeError("GGUF writer: tensor \"" + t.name + "\" has a dimension <= 0");
            if (d > 0)
                elementsPastRow *= std::uint64_t(t.ne[d]);
        }
        const auto row = kernels::rowBytes(t.type, std::uint64_t(t.ne[0]));
        if (!row)
            return makeError("GGUF writer: tensor \"" + t.name + "\": row length "
                + std::to_string(t.ne[0]) + " is not a whole number of blocks of its type");
        const std::uint64_t bytes = *row * elementsPastRow;
        if (!t.fill && bytes != t.bytes)
            return makeError("GGUF writer: tensor \"" + t.name + "\" has " + std::to_string(t.bytes)
                + " bytes of data, its type and shape need " + std::to_string(bytes));
        sizes.push_back(bytes);
        sink.string(t.name);
        sink.pod<std::uint32_t>(std::uint32_t(t.ne.size()));
        for (auto n : t.ne)
            sink.pod<std::uint64_t>(std::uint64_t(n));
        sink.pod<std::uint32_t>(std::uint32_t(t.type));
        sink.pod<std::uint64_t>(offset);
        offsets.push_back(offset);
        offset = alignUp(offset + bytes, m_alignment);
    }
    out.resize(std::size_t(alignUp(out.size(), m_alignment)), std::byte { 0 });
    totalSize = out.size() + offset;
    return out;
}

Result<std::vector<std::byte>> GgufWriter::toBytes() const
{
    std::vector<std::uint64_t> offsets, sizes;
    std::uint64_t total = 0;
    auto head = header(offsets, sizes, total);
    if (!head)
        return head.error();
    std::vector<std::byte> out = std::move(*head);
    const std::size_t dataStart = out.size();
    out.resize(std::size_t(total), std::byte { 0 });
    for (std::size_t i = 0; i < m_tensors.size(); ++i) {
        const auto& t = m_tensors[i];
        std::byte* dst = out.data() + dataStart + offsets[i];
        if (t.fill) {
            auto ok = t.fill(dst, sizes[i]);
            if (!ok)
                return ok.error();
        } else if (t.borrowed) {
            std::memcpy(dst, t.borrowed, std::size_t(sizes[i]));
        } else {
            std::memcpy(dst, t.owned.data(), std::size_t(sizes[i]));
        }
    }
    return out;
}

Result<void> GgufWriter::write(const std::string& path, const Options& options) const
{
    std::vector<std::uint64_t> offsets, sizes;
    std::uint64_t total = 0;
    auto head = header(offsets, sizes, total);
    if (!head)
        return head.error();
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        return makeError(path + ": cannot create: " + std::strerror(errno));
    auto failWith = [&](const std::string& problem) -> Result<void> {
        std::fclose(f);
        std::remove(path.c_str());
        return makeError(path + ": " + problem);
    };
    if (std::fwrite(head->data(), 1, head->size(), f) != head->size())
        return failWith(std::string("write failed: ") + std::strerror(errno));
    if (options.sparsePayload) {
        std::fflush(f);
        if (::ftruncate(fileno(f), off_t(total)) != 0)
            return failWith(std::string("cannot extend the file: ") + std::strerror(errno));
        std::fclose(f);
        return {};
    }
    std::uint64_t written = head->size();
    const std::uint64_t dataStart = head->size();
    std::vector<std::byte> buffer;
    static const std::byte zeros[64] = {};
    for (std::size_t i = 0; i < m_tensors.size(); ++i) {
        const auto& t = m_tensors[i];
        const std::uint64_t start = dataStart + offsets[i];
        while (written < start) { // alignment padding
            const auto n = std::size_t(std::min<std::uint64_t>(sizeof zeros, start - written));
            if (std::fwrite(zeros, 1, n, f) != n)
                return failWith(std::string("write failed: ") + std::strerror(errno));
            written += n;
        }
        const void* src = t.borrowed ? t.borrowed : t.owned.data();
        if (t.fill) {
            buffer.assign(std::size_t(sizes[i]), std::byte { 0 });
            auto ok = t.fill(buffer.data(), sizes[i]);
            if (!ok) {
                std::fclose(f);
                std::remove(path.c_str());
                return ok.error();
            }
            src = buffer.data();
        }
        if (std::fwrite(src, 1, std::size_t(sizes[i]), f) != sizes[i])
            return failWith(std::string("write failed: ") + std::strerror(errno));
        written += sizes[i];
    }
    while (written < total) {
        const auto n = std::size_t(std::min<std::uint64_t>(sizeof zeros, total - written));
        if (std::fwrite(zeros, 1, n, f) != n)
            return failWith(std::string("write failed: ") + std::strerror(errno));
        written += n;
    }
    if (std::fclose(f) != 0) {
        std::remove(path.c_str());
        return makeError(path + ": write failed: " + std::strerror(errno));
    }
    return {};
}

} // namespace cw::engine
