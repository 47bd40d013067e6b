#include "app/ingest/docx_numbering.h"

#include "app/ingest/docx_xml.h"
#include "app/segment/chinese_numerals.h"

#include <QXmlStreamReader>

namespace cw::ingest {

namespace {

constexpr int kMaxLists = 100000;

QString roman(int value)
{
    if (value <= 0 || value >= 4000)
        return QString::number(value);
    static const int values[] = { 1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1 };
    static const char* const symbols[]
        = { "m", "cm", "d", "cd", "c", "xc", "l", "xl", "x", "ix", "v", "iv", "i" };
    QString out;
    for (int i = 0; i < 13; ++i) {
        while (value >= values[i]) {
            out += QLatin1String(symbols[i]);
            value -= values[i];
        }
    }
    return out;
}

// Reads one <w:lvl> (the reader stands on its start element) into `level`.
void readLevel(QXmlStreamReader& xml, DocxNumbering::Level& level)
{
    while (xml.readNextStartElement()) {
        const auto name = xml.name();
        if (name == QLatin1String("start"))
            level.start = std::clamp(xmlIntAttribute(xml, QLatin1StringView("val"), 1), 0, 1000000);
        else if (name == QLatin1String("numFmt"))
            level.format = xmlAttribute(xml, QLatin1StringView("val"));
        else if (name == QLatin1String("lvlText"))
            level.text = xmlAttribute(xml, QLatin1StringView("val"));
        else if (name == QLatin1String("suff"))
            level.suffix = xmlAttribute(xml, QLatin1StringView("val"));
        else if (name == QLatin1String("isLgl"))
            level.legal = xmlOnOff(xml);
        xml.skipCurrentElement();
    }
}

} // namespace

QString DocxNumbering::formatNumber(int value, const QString& format)
{
    if (format == QLatin1String("lowerLetter") || format == QLatin1String("upperLetter")) {
        if (value <= 0)
            return QString::number(value);
        const QChar letter = QChar('a' + (value - 1) % 26);
        QString out(std::min((value - 1) / 26 + 1, 20), letter);
        return format == QLatin1String("upperLetter") ? out.toUpper() : out;
    }
    if (format == QLatin1String("lowerRoman"))
        return roman(value);
    if (format == QLatin1String("upperRoman"))
        return roman(value).toUpper();
    if (format == QLatin1String("decimalZero"))
        return value < 10 && value >= 0 ? QStringLiteral("0%1").arg(value) : QString::number(value);
    if (format == QLatin1String("ordinal")) {
        const int tens = value % 100;
        const int ones = value % 10;
        const char* suffix = (tens >= 11 && tens <= 13) ? "th"
            : ones == 1                                 ? "st"
            : ones == 2                                 ? "nd"
            : ones == 3                                 ? "rd"
                                                        : "th";
        return QString::number(value) + QLatin1String(suffix);
    }
    if (format.startsWith(QLatin1String("chinese")) || format.startsWith(QLatin1String("japanese"))
        || format.startsWith(QLatin1String("taiwanese"))
        || format == QLatin1String("ideographDigital"))
        return toChineseNumeral(value);
    if (format == QLatin1String("ideographTraditional")) {
        static const QString stems = QStringLiteral("甲乙丙丁戊己庚辛壬癸");
        return value >= 1 && value <= 10 ? QString(stems.at(value - 1)) : QString::number(value);
    }
    if (format == QLatin1String("none"))
        return {};
    return QString::number(value);
}

Result<DocxNumbering> DocxNumbering::parse(const QByteArray& bytes, const QString& part)
{
    DocxNumbering numbering;
    QXmlStreamReader xml(bytes);
    while (!xml.atEnd()) {
        const auto token = xml.readNext();
        if (token == QXmlStreamReader::DTD)
            return makeError(part.toStdString() + " declares a DTD, which DOCX parts never do");
        if (token != QXmlStreamReader::StartElement)
            continue;
        if (xml.name() == QLatin1String("abstractNum")) {
            const int id = xmlIntAttribute(xml, QLatin1StringView("abstractNumId"), -1);
            Abstract abstract;
            while (xml.readNextStartElement()) {
                if (xml.name() == QLatin1String("lvl")) {
                    const int ilvl = xmlIntAttribute(xml, QLatin1StringView("ilvl"), -1);
                    Level level;
                    readLevel(xml, level);
                    if (ilvl >= 0 && ilvl < kLevels)
                        abstract.levels[ilvl] = level;
                } else {
                    xml.skipCurrentElement();
                }
            }
            if (id >= 0 && numbering.m_abstracts.size() < kMaxLists)
                numbering.m_abstracts.insert(id, abstract);
        } else if (xml.name() == QLatin1String("num")) {
            const int id = xmlIntAttribute(xml, QLatin1StringView("numId"), -1);
            Instance instance;
            while (xml.readNextStartElement()) {
                if (xml.name() == QLatin1String("abstractNumId")) {
                    instance.abstractId = xmlIntAttribute(xml, QLatin1StringView("val"), -1);
                    xml.skipCurrentElement();
                } else if (xml.name() == QLatin1String("lvlOverride")) {
                    const int ilvl = xmlIntAttribute(xml, QLatin1StringView("ilvl"), -1);
                    while (xml.readNextStartElement()) {
                        const bool valid = ilvl >= 0 && ilvl < kLevels;
                        if (xml.name() == QLatin1String("startOverride") && valid) {
                            instance.startOverride[ilvl] = std::clamp(
                                xmlIntAttribute(xml, QLatin1StringView("val"), 1), 0, 1000000);
                            xml.skipCurrentElement();
                        } else if (xml.name() == QLatin1String("lvl") && valid) {
                            readLevel(xml, instance.overrideLevel[ilvl]);
                            instance.hasOverrideLevel[ilvl] = true;
                        } else {
                            xml.skipCurrentElement();
                        }
                    }
                } else {
                    xml.skipCurrentElement();
                }
            }
            if (id >= 0 && numbering.m_instances.size() < kMaxLists)
                numbering.m_instances.insert(id, instance);
        }
    }
    if (xml.hasError())
        return makeError(xmlErrorText(xml, part));
    return numbering;
}

QString DocxNumbering::nextLabel(int numId, int ilvl)
{
    const auto instanceIt = m_instances.constFind(numId);
    if (instanceIt == m_instances.constEnd() || ilvl < 0 || ilvl >= kLevels)
        return {};
    const Instance& instance = *instanceIt;
    const auto abstractIt = m_abstracts.constFind(instance.abstractId);
    if (abstractIt == m_abstracts.constEnd())
        return {};
    const Abstract& abstract = *abstractIt;
    auto levelOf = [&](int l) -> const Level& {
        return instance.hasOverrideLevel[l] ? instance.overrideLevel[l] : abstract.levels[l];
    };
    auto startOf = [&](int l) {
        return instance.startOverride[l] >= 0 ? instance.startOverride[l] : levelOf(l).start;
    };
    Counters& counters = m_counters[instance.abstractId];
    if (!m_instanceStarted.value(numId)) {
        m_instanceStarted.insert(numId, true);
        for (int l = 0; l < kLevels; ++l) {
            if (instance.startOverride[l] >= 0)
                counters.used[l] = false;
        }
    }
    counters.value[ilvl] = counters.used[ilvl] ? counters.value[ilvl] + 1 : startOf(ilvl);
    counters.used[ilvl] = true;
    for (int deeper = ilvl + 1; deeper < kLevels; ++deeper)
        counters.used[deeper] = false;

    const Level& level = levelOf(ilvl);
    QString label;
    if (level.format == QLatin1String("bullet")) {
        label = QStringLiteral("\u2022");
    } else {
        const QString& pattern = level.text;
        for (qsizetype i = 0; i < pattern.size(); ++i) {
            const QChar c = pattern.at(i);
            if (c == QLatin1Char('%') && i + 1 < pattern.size()
                && pattern.at(i + 1) >= QLatin1Char('1') && pattern.at(i + 1) <= QLatin1Char('9')) {
                const int l = pattern.at(i + 1).unicode() - '1';
                const int value = l == ilvl ? counters.value[l]
                    : counters.used[l]      ? counters.value[l]
                                            : startOf(l);
                label += formatNumber(
                    value, level.legal ? QStringLiteral("decimal") : levelOf(l).format);
                ++i;
            } else {
                label += c;
            }
        }
    }
    if (label.isEmpty())
        return {};
    if (level.suffix == QLatin1String("space"))
        label += QLatin1Char(' ');
    else if (level.suffix != QLatin1String("nothing"))
        label += QLatin1Char('\t');
    return label;
}

} // namespace cw::ingest
