#pragma once

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace cw::ui {

// Syntax colours for the code panel's editors: keywords, strings, numbers and comments of
// Python, C++, JavaScript/TypeScript and Go (a lexer's worth, not a parser's: good enough to
// read by, cheap enough to run on every keystroke).
class CodeHighlighter : public QSyntaxHighlighter {
    Q_OBJECT
public:
    explicit CodeHighlighter(QTextDocument* document);
    void setLanguage(const QString& language);
    const QString& language() const { return m_language; }

protected:
    void highlightBlock(const QString& text) override;

private:
    struct Rule {
        QRegularExpression pattern;
        QTextCharFormat format;
    };
    QString m_language;
    QList<Rule> m_rules;
    QTextCharFormat m_comment;
    QString m_lineComment; // "#" or "//"
    bool m_blockComments = false; // /* ... */
};

} // namespace cw::ui
