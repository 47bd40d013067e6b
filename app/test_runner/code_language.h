#pragma once

#include "engine/common/result.h"

#include <QByteArray>
#include <QString>

namespace cw {

constexpr qint64 kMaxCodeBytes = 1 << 20; // 1 MB: larger files are refused

// The language of a piece of code: python, cpp, javascript, typescript, go; "" when unknown.
// The file name's extension decides when it has a known one, else the content's marks
// (a shebang, #include, package/func, def/import, function/const/=>).
QString detectLanguage(const QString& fileName, const QString& code);

// Names a language for people: "Python", "C++", ...
QString languageTitle(const QString& language);

// The usual extension for code of that language (".py"), for pasted code without a name.
QString languageExtension(const QString& language);

// Checks a file's bytes before they become code: refuses files over 1 MB, binary files (a
// NUL byte or invalid UTF-8) and, when `language` is empty after detection, unknown
// languages. Errors name the file. Returns the text.
Result<QString> readableCode(const QByteArray& bytes, const QString& fileName);

} // namespace cw
