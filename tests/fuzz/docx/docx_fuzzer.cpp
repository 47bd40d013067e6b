// libFuzzer target: readDocxBytes must turn any bytes into a document or an error, within
// the caps, without crashing.
#include "app/ingest/document_reader.h"

#include <QByteArray>
#include <QString>
#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    cw::ReadOptions options;
    options.maxUncompressedBytes = 8 * 1024 * 1024;
    options.maxZipEntries = 200;
    auto document = cw::readDocxBytes(bytes, QStringLiteral("fuzz.docx"), options);
    if (document.ok()) {
        // Every line span lies inside the text.
        for (const cw::TextLine& line : document->lines) {
            if (line.start < 0 || line.end > document->text.size() || line.start > line.end)
                __builtin_trap();
        }
    }
    return 0;
}
