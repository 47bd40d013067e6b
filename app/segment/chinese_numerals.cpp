#include "app/segment/chinese_numerals.h"

namespace cw {

namespace {

const QString kDigits = QStringLiteral("零一二三四五六七八九");

int digitValue(QChar c)
{
    switch (c.unicode()) {
    case 0x96F6: // 零
    case 0x3007: // 〇
        return 0;
    case 0x4E00: // 一
    case 0x58F9: // 壹
        return 1;
    case 0x4E8C: // 二
    case 0x8D30: // 贰
    case 0x8CB3: // 貳
    case 0x4E24: // 两
        return 2;
    case 0x4E09: // 三
    case 0x53C1: // 叁
    case 0x53C3: // 參
        return 3;
    case 0x56DB: // 四
    case 0x8086: // 肆
        return 4;
    case 0x4E94: // 五
    case 0x4F0D: // 伍
        return 5;
    case 0x516D: // 六
    case 0x9646: // 陆
    case 0x9678: // 陸
        return 6;
    case 0x4E03: // 七
    case 0x67D2: // 柒
        return 7;
    case 0x516B: // 八
    case 0x634C: // 捌
        return 8;
    case 0x4E5D: // 九
    case 0x7396: // 玖
        return 9;
    default:
        break;
    }
    if (c >= QLatin1Char('0') && c <= QLatin1Char('9'))
        return c.unicode() - '0';
    if (c.unicode() >= 0xFF10 && c.unicode() <= 0xFF19) // full-width digits
        return c.unicode() - 0xFF10;
    return -1;
}

int unitValue(QChar c)
{
    switch (c.unicode()) {
    case 0x5341: // 十
    case 0x62FE: // 拾
        return 10;
    case 0x767E: // 百
    case 0x4F70: // 佰
        return 100;
    case 0x5343: // 千
    case 0x4EDF: // 仟
        return 1000;
    case 0x4E07: // 万
    case 0x842C: // 萬
        return 10000;
    default:
        return 0;
    }
}

} // namespace

bool isChineseNumeralChar(QChar c)
{
    return digitValue(c) >= 0 || unitValue(c) > 0;
}

QString toChineseNumeral(int value)
{
    if (value <= 0 || value > 99999)
        return QString::number(value);
    static const int units[] = { 10000, 1000, 100, 10, 1 };
    static const QString unitChars = QStringLiteral("万千百十");
    QString out;
    bool pendingZero = false;
    for (int i = 0; i < 5; ++i) {
        const int digit = (value / units[i]) % 10;
        if (digit == 0) {
            pendingZero = !out.isEmpty();
            continue;
        }
        if (pendingZero)
            out += kDigits.at(0);
        pendingZero = false;
        // 10..19 read 十, 十一 ... rather than 一十一.
        if (!(units[i] == 10 && digit == 1 && out.isEmpty()))
            out += kDigits.at(digit);
        if (i < 4)
            out += unitChars.at(i);
    }
    return out;
}

int parseChineseNumeral(QStringView text)
{
    if (text.isEmpty() || text.size() > 12)
        return -1;
    bool allDigits = true;
    for (QChar c : text) {
        if (!((c >= QLatin1Char('0') && c <= QLatin1Char('9'))
                || (c.unicode() >= 0xFF10 && c.unicode() <= 0xFF19)))
            allDigits = false;
    }
    if (allDigits) {
        int value = 0;
        for (QChar c : text)
            value = value * 10 + digitValue(c);
        return value;
    }
    int total = 0;
    int section = 0; // below 10000
    int digit = -1;
    for (QChar c : text) {
        const int d = digitValue(c);
        if (d >= 0) {
            digit = d;
            continue;
        }
        const int unit = unitValue(c);
        if (unit == 0)
            return -1;
        if (unit == 10000) {
            section += digit > 0 ? digit : 0;
            total += (section == 0 ? 1 : section) * 10000;
            section = 0;
        } else {
            section += (digit < 0 ? 1 : digit) * unit;
        }
        digit = -1;
    }
    if (digit > 0)
        section += digit;
    return total + section;
}

} // namespace cw
