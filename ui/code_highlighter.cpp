#include "ui/code_highlighter.h"

#include <QGuiApplication>
#include <QPalette>

namespace cw::ui {

namespace {

QStringList keywordsOf(const QString& language)
{
    if (language == "python")
        return { "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
            "del", "elif", "else", "except", "False", "finally", "for", "from", "global", "if",
            "import", "in", "is", "lambda", "None", "nonlocal", "not", "or", "pass", "raise",
            "return", "True", "try", "while", "with", "yield", "self" };
    if (language == "cpp")
        return { "auto", "bool", "break", "case", "catch", "char", "class", "const", "constexpr",
            "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "false",
            "float", "for", "if", "inline", "int", "long", "namespace", "new", "nullptr",
            "operator", "private", "protected", "public", "return", "short", "signed", "sizeof",
            "static", "struct", "switch", "template", "this", "throw", "true", "try", "typename",
            "unsigned", "using", "virtual", "void", "while", "TEST", "TEST_F", "EXPECT_EQ",
            "ASSERT_EQ", "EXPECT_TRUE", "EXPECT_FALSE" };
    if (language == "go")
        return { "break", "case", "chan", "const", "continue", "default", "defer", "else",
            "fallthrough", "for", "func", "go", "goto", "if", "import", "interface", "map",
            "package", "range", "return", "select", "struct", "switch", "type", "var", "nil",
            "true", "false" };
    return { "async", "await", "break", "case", "catch", "class", "const", "continue", "default",
        "delete", "do", "else", "export", "extends", "false", "finally", "for", "function", "if",
        "import", "in", "instanceof", "interface", "let", "new", "null", "return", "require",
        "switch", "this", "throw", "true", "try", "type", "typeof", "undefined", "var", "while",
        "test", "describe", "it" };
}

QTextCharFormat colour(const QColor& c, bool bold = false)
{
    QTextCharFormat f;
    f.setForeground(c);
    if (bold)
        f.setFontWeight(QFont::Bold);
    return f;
}

} // namespace

CodeHighlighter::CodeHighlighter(QTextDocument* document)
    : QSyntaxHighlighter(document)
{
    setLanguage(QStringLiteral("python"));
}

void CodeHighlighter::setLanguage(const QString& language)
{
    m_language = language;
    m_rules.clear();
    const bool dark = QGuiApplication::palette().color(QPalette::Base).lightness() < 128;
    const QColor keyword = dark ? QColor(0x82, 0xaa, 0xff) : QColor(0x00, 0x33, 0xb3);
    const QColor string = dark ? QColor(0xc3, 0xe8, 0x8d) : QColor(0x06, 0x7d, 0x17);
    const QColor number = dark ? QColor(0xf7, 0x8c, 0x6c) : QColor(0x17, 0x50, 0xeb);
    m_comment = colour(dark ? QColor(0x8a, 0x8a, 0x8a) : QColor(0x8c, 0x8c, 0x8c));
    if (language == "text" || language.isEmpty()) {
        rehighlight();
        return;
    }
    m_rules.append({ QRegularExpression("\\b(" + keywordsOf(language).join('|') + ")\\b"),
        colour(keyword, true) });
    m_rules.append({ QRegularExpression(QStringLiteral("\\b\\d+(\\.\\d+)?\\b")), colour(number) });
    if (language == "cpp")
        m_rules.append({ QRegularExpression(QStringLiteral("^\\s*#\\s*\\w+")), colour(keyword) });
    m_rules.append(
        { QRegularExpression(QStringLiteral(R"re("([^"\\]|\\.)*"|'([^'\\]|\\.)*'|`[^`]*`)re")),
            colour(string) });
    m_lineComment = language == "python" ? QStringLiteral("#") : QStringLiteral("//");
    m_blockComments = language != "python";
    rehighlight();
}

void CodeHighlighter::highlightBlock(const QString& text)
{
    for (const Rule& rule : std::as_const(m_rules)) {
        auto it = rule.pattern.globalMatch(text);
        while (it.hasNext()) {
            const auto m = it.next();
            setFormat(int(m.capturedStart()), int(m.capturedLength()), rule.format);
        }
    }
    if (m_rules.isEmpty())
        return;
    // Comments last, over anything inside them (a '#' inside a string is rare enough here).
    setCurrentBlockState(0);
    int start = 0;
    if (m_blockComments) {
        start = previousBlockState() == 1 ? 0 : int(text.indexOf(QLatin1String("/*")));
        while (start >= 0) {
            const int end = int(text.indexOf(QLatin1String("*/"), start));
            const int length = end < 0 ? int(text.size()) - start : end - start + 2;
            if (end < 0)
                setCurrentBlockState(1);
            setFormat(start, length, m_comment);
            start = int(text.indexOf(QLatin1String("/*"), start + length));
        }
    }
    const QRegularExpression line("(^|\\s)" + QRegularExpression::escape(m_lineComment) + ".*$");
    const auto m = line.match(text);
    if (m.hasMatch())
        setFormat(int(m.capturedStart()), int(m.capturedLength()), m_comment);
}

} // namespace cw::ui
