#include "app/test_runner/code_language.h"

#include <QFileInfo>
#include <QRegularExpression>
#include <QStringDecoder>

namespace cw {

QString detectLanguage(const QString& fileName, const QString& code)
{
    const QString suffix = QFileInfo(fileName).suffix().toLower();
    if (suffix == "py")
        return QStringLiteral("python");
    if (QStringList { "cpp", "cc", "cxx", "hpp", "hh", "hxx", "h", "ipp" }.contains(suffix))
        return QStringLiteral("cpp");
    if (QStringList { "js", "mjs", "cjs", "jsx" }.contains(suffix))
        return QStringLiteral("javascript");
    if (QStringList { "ts", "mts", "cts", "tsx" }.contains(suffix))
        return QStringLiteral("typescript");
    if (suffix == "go")
        return QStringLiteral("go");
    if (suffix == "txt" || suffix == "md")
        return QStringLiteral("text");

    const QString head = code.left(8192);
    if (head.startsWith(QLatin1String("#!")) && head.section('\n', 0, 0).contains("python"))
        return QStringLiteral("python");
    if (head.startsWith(QLatin1String("#!")) && head.section('\n', 0, 0).contains("node"))
        return QStringLiteral("javascript");
    static const QRegularExpression kGo(
        QStringLiteral(R"(^package \w+\s*$)"), QRegularExpression::MultilineOption);
    static const QRegularExpression kCpp(
        QStringLiteral(
            R"(^\s*#\s*(include|define|pragma)\b|\b(std::|template\s*<|namespace\s+\w+\s*\{))"),
        QRegularExpression::MultilineOption);
    static const QRegularExpression kPython(
        QStringLiteral(
            R"(^\s*(def \w+\(.*\)\s*(->.*)?:|class \w+.*:|from [\w.]+ import |import \w+\s*$))"),
        QRegularExpression::MultilineOption);
    static const QRegularExpression kTypeScript(
        QStringLiteral(R"re(\b(interface \w+\s*\{|: (string|number|boolean)\b|export type ))re"));
    static const QRegularExpression kJavaScript(QStringLiteral(
        R"(\b(function\s*\w*\s*\(|const \w+ = |let \w+ = |=>|module\.exports|require\())"));
    if (kGo.match(head).hasMatch() && head.contains(QLatin1String("func ")))
        return QStringLiteral("go");
    if (kCpp.match(head).hasMatch())
        return QStringLiteral("cpp");
    if (kPython.match(head).hasMatch())
        return QStringLiteral("python");
    if (kTypeScript.match(head).hasMatch())
        return QStringLiteral("typescript");
    if (kJavaScript.match(head).hasMatch())
        return QStringLiteral("javascript");
    return {};
}

QString languageTitle(const QString& language)
{
    if (language == "python")
        return QStringLiteral("Python");
    if (language == "cpp")
        return QStringLiteral("C++");
    if (language == "javascript")
        return QStringLiteral("JavaScript");
    if (language == "typescript")
        return QStringLiteral("TypeScript");
    if (language == "go")
        return QStringLiteral("Go");
    if (language == "text")
        return QStringLiteral("Text");
    return language;
}

QString languageExtension(const QString& language)
{
    if (language == "python")
        return QStringLiteral(".py");
    if (language == "cpp")
        return QStringLiteral(".h");
    if (language == "javascript")
        return QStringLiteral(".js");
    if (language == "typescript")
        return QStringLiteral(".ts");
    if (language == "go")
        return QStringLiteral(".go");
    return QStringLiteral(".txt");
}

Result<QString> readableCode(const QByteArray& bytes, const QString& fileName)
{
    const std::string name = fileName.isEmpty() ? std::string("the code") : fileName.toStdString();
    if (bytes.size() > kMaxCodeBytes)
        return makeError(name + ": larger than 1 MB (" + std::to_string(bytes.size() >> 10)
            + " KB); give one file or function at a time");
    if (bytes.contains('\0'))
        return makeError(name + ": a binary file, not source code");
    QStringDecoder decoder(QStringDecoder::Utf8);
    QString text = decoder(bytes);
    if (decoder.hasError())
        return makeError(name + ": not UTF-8 text");
    if (text.trimmed().isEmpty())
        return makeError(name + ": empty");
    return text;
}

} // namespace cw
