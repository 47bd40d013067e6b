#pragma once

#include <QString>
#include <QXmlStreamReader>

namespace cw::ingest {

// The value of a WordprocessingML attribute by local name ("val" for w:val), whatever
// prefix the document uses.
inline QString xmlAttribute(const QXmlStreamReader& xml, QLatin1StringView name)
{
    for (const QXmlStreamAttribute& attribute : xml.attributes()) {
        if (attribute.name() == name)
            return attribute.value().toString();
    }
    return {};
}

// w:val as an integer, or `fallback` when absent or not a number.
inline int xmlIntAttribute(const QXmlStreamReader& xml, QLatin1StringView name, int fallback)
{
    bool ok = false;
    const int value = xmlAttribute(xml, name).toInt(&ok);
    return ok ? value : fallback;
}

// On/off properties (<w:b/>, <w:b w:val="0"/>): true unless w:val says false.
inline bool xmlOnOff(const QXmlStreamReader& xml)
{
    const QString value = xmlAttribute(xml, QLatin1StringView("val"));
    return !(value == QLatin1String("0") || value == QLatin1String("false")
        || value == QLatin1String("off") || value == QLatin1String("none"));
}

// "word/document.xml line 3, column 7: <reason>" for an error message.
inline std::string xmlErrorText(const QXmlStreamReader& xml, const QString& part)
{
    return part.toStdString() + " is malformed XML (line " + std::to_string(xml.lineNumber())
        + ", column " + std::to_string(xml.columnNumber())
        + "): " + xml.errorString().toStdString();
}

} // namespace cw::ingest
