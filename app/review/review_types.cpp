#include "app/review/review_types.h"

#include <algorithm>

namespace cw {

int Document::pageAt(qsizetype offset) const
{
    // Lines are in text order: the last line starting at or before offset holds it.
    auto it = std::upper_bound(lines.begin(), lines.end(), offset,
                               [](qsizetype value, const TextLine& line) { return value < line.start; });
    if (it == lines.begin())
        return lines.isEmpty() ? 0 : lines.front().page;
    return std::prev(it)->page;
}

QList<QPair<int, QRectF>> Document::boxesFor(qsizetype start, qsizetype end) const
{
    QList<QPair<int, QRectF>> boxes;
    for (const TextLine& line : lines) {
        if (line.end <= start || line.start >= end || line.page == 0)
            continue;
        QRectF box = line.box;
        const qsizetype length = line.end - line.start;
        if (length > 0) {
            // Clip proportionally: good enough for highlighting part of a line.
            const double left = double(std::max(start, line.start) - line.start) / double(length);
            const double right = double(std::min(end, line.end) - line.start) / double(length);
            box = QRectF(line.box.left() + left * line.box.width(), line.box.top(),
                         (right - left) * line.box.width(), line.box.height());
        }
        boxes.append({line.page, box});
    }
    return boxes;
}

qsizetype Document::codePointOffset(qsizetype utf16Offset) const
{
    qsizetype points = 0;
    const qsizetype limit = std::min(utf16Offset, text.size());
    for (qsizetype i = 0; i < limit; ++i) {
        if (!(text.at(i).isLowSurrogate() && i > 0 && text.at(i - 1).isHighSurrogate()))
            ++points;
    }
    return points;
}

QString riskName(Risk risk)
{
    switch (risk) {
    case Risk::Low:
        return QStringLiteral("low");
    case Risk::Medium:
        return QStringLiteral("medium");
    case Risk::High:
        return QStringLiteral("high");
    case Risk::None:
        break;
    }
    return QStringLiteral("none");
}

Risk riskFromName(const QString& name)
{
    const QString lowered = name.trimmed().toLower();
    if (lowered == QLatin1String("low"))
        return Risk::Low;
    if (lowered == QLatin1String("medium"))
        return Risk::Medium;
    if (lowered == QLatin1String("high"))
        return Risk::High;
    return Risk::None;
}

} // namespace cw
