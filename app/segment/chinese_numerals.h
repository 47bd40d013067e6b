#pragma once

#include <QString>
#include <QStringView>

namespace cw {

// Chinese numerals as contracts number their articles and chapters (第十二条, 第三章).
// Writes 1..99999 in common form: 1 一, 10 十, 12 十二, 20 二十, 105 一百零五. Other values
// come back as decimal digits.
QString toChineseNumeral(int value);

// Reads a Chinese numeral (一 ... 九, 十, 百, 千, 万, 零/〇, and the financial forms 壹 贰 叁 ...
// 拾 佰 仟) or ASCII/full-width digits. Returns -1 when `text` is not a numeral.
int parseChineseNumeral(QStringView text);

// True for a character that can appear in a Chinese numeral.
bool isChineseNumeralChar(QChar c);

} // namespace cw
