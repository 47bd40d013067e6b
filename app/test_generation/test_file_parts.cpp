#include "app/test_generation/test_file_parts.h"

#include <QRegularExpression>
#include <QSet>

namespace cw {

namespace {

// Index just past the bracket that closes the one at `open` (C-like source: strings, chars,
// template literals and comments are skipped), or -1.
qsizetype matchingBracket(const QString& text, qsizetype open)
{
    const QChar opening = text[open];
    const QChar closing = opening == '(' ? ')' : opening == '{' ? '}' : ']';
    int depth = 0;
    for (qsizetype i = open; i < text.size(); ++i) {
        const QChar c = text[i];
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
            i = text.indexOf('\n', i);
            if (i < 0)
                return -1;
            continue;
        }
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
            i = text.indexOf(QLatin1String("*/"), i + 2);
            if (i < 0)
                return -1;
            ++i;
            continue;
        }
        if (c == '"' || c == '\'' || c == '`') {
            for (++i; i < text.size() && text[i] != c; ++i) {
                if (text[i] == '\\')
                    ++i;
                else if (c != '`' && text[i] == '\n')
                    break; // an apostrophe in a comment-like place: give up on this quote
            }
            continue;
        }
        if (c == opening)
            ++depth;
        else if (c == closing && --depth == 0)
            return i + 1;
    }
    return -1;
}

// Start of the line holding `at`, moved up over the comment and attribute lines right above.
qsizetype withLeadingComments(const QString& text, qsizetype at, const QString& marker)
{
    qsizetype start = text.lastIndexOf('\n', at - 1) + 1;
    while (start > 0) {
        const qsizetype previous = text.lastIndexOf('\n', start - 2) + 1;
        const QString line = text.mid(previous, start - previous).trimmed();
        if (line.isEmpty() || !line.startsWith(marker))
            break;
        start = previous;
    }
    return start;
}

// Tests found by a pattern whose match ends at the bracket that opens the test's body or
// argument list; the block ends where that bracket closes (and at the end of its line).
TestFileParts splitBracketed(const QString& text, const QRegularExpression& start,
    const std::function<TestBlock(const QRegularExpressionMatch&, const QString& body)>& make,
    const QString& commentMarker)
{
    TestFileParts parts;
    qsizetype at = 0;
    auto it = start.globalMatch(text);
    while (it.hasNext()) {
        const auto match = it.next();
        if (match.capturedStart() < at)
            continue; // inside the previous test
        const qsizetype open = match.capturedEnd() - 1;
        const qsizetype close = matchingBracket(text, open);
        if (close < 0)
            break; // unbalanced: the rest stays in the preamble and fails to build
        qsizetype end = text.indexOf('\n', close);
        end = end < 0 ? text.size() : end + 1;
        const qsizetype begin
            = std::max(at, withLeadingComments(text, match.capturedStart(), commentMarker));
        parts.preamble += text.mid(at, begin - at);
        parts.tests.append(make(match, text.mid(begin, end - begin)));
        at = end;
    }
    parts.preamble += text.mid(at);
    return parts;
}

TestFileParts splitPython(const QString& text)
{
    static const QRegularExpression kStart(
        QStringLiteral(R"(^(?:async\s+)?def\s+(test\w*)\s*\(|^class\s+(Test\w*)\b)"));
    static const QRegularExpression kMethod(
        QStringLiteral(R"(^\s+(?:async\s+)?def\s+(test\w*)\s*\()"),
        QRegularExpression::MultilineOption);
    TestFileParts parts;
    const QStringList lines = text.split('\n');
    QStringList pendingDecorators; // lines above a def that belong to it
    TestBlock* current = nullptr;
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString& line = lines[i];
        const QString newline = i + 1 < lines.size() ? QStringLiteral("\n") : QString();
        const bool topLevel = !line.isEmpty() && !line[0].isSpace();
        if (current && (!topLevel || line.startsWith(')'))) {
            current->text += line + newline;
            continue;
        }
        if (topLevel && (line.startsWith('@') || line.startsWith('#'))) {
            current = nullptr;
            pendingDecorators.append(line + newline);
            continue;
        }
        const auto match = kStart.match(line);
        if (match.hasMatch()) {
            TestBlock block;
            block.name = match.captured(1).isEmpty() ? match.captured(2) : match.captured(1);
            block.text = pendingDecorators.join(QString()) + line + newline;
            pendingDecorators.clear();
            parts.tests.append(block);
            current = &parts.tests.last();
            continue;
        }
        current = nullptr;
        parts.preamble += pendingDecorators.join(QString()) + line + newline;
        pendingDecorators.clear();
    }
    parts.preamble += pendingDecorators.join(QString());
    for (TestBlock& block : parts.tests) {
        if (block.name.startsWith(QLatin1String("Test"))) {
            auto it = kMethod.globalMatch(block.text);
            while (it.hasNext())
                block.caseNames.append(it.next().captured(1));
        } else {
            block.caseNames.append(block.name);
        }
    }
    return parts;
}

} // namespace

TestFileParts splitTestFile(const QString& language, const QString& text)
{
    if (language == "python")
        return splitPython(text);
    if (language == "cpp") {
        static const QRegularExpression kStart(
            QStringLiteral(
                R"(^[ \t]*(?:TEST|TEST_F|TEST_P|TYPED_TEST)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*\{)"),
            QRegularExpression::MultilineOption);
        return splitBracketed(
            text, kStart,
            [](const QRegularExpressionMatch& m, const QString& body) {
                const QString name = m.captured(1) + '.' + m.captured(2);
                return TestBlock { name, { name }, body };
            },
            QStringLiteral("//"));
    }
    if (language == "javascript" || language == "typescript") {
        static const QRegularExpression kStart(
            QStringLiteral(R"(^(?:test|it|describe)\s*\()"), QRegularExpression::MultilineOption);
        static const QRegularExpression kName(QStringLiteral(R"(^\w+\s*\(\s*(['"`])(.*?)\1)"));
        static const QRegularExpression kInner(
            QStringLiteral(R"(\b(?:test|it)\s*\(\s*(['"`])(.*?)\1)"));
        return splitBracketed(
            text, kStart,
            [](const QRegularExpressionMatch&, const QString& body) {
                TestBlock block;
                const QString trimmed = body.mid(body.indexOf(QRegularExpression(
                    "^(test|it|describe)", QRegularExpression::MultilineOption)));
                block.name = kName.match(trimmed).captured(2);
                if (trimmed.startsWith(QLatin1String("describe"))) {
                    auto it = kInner.globalMatch(trimmed.mid(8));
                    while (it.hasNext())
                        block.caseNames.append(it.next().captured(2));
                } else {
                    block.caseNames.append(block.name);
                }
                block.text = body;
                return block;
            },
            QStringLiteral("//"));
    }
    if (language == "go") {
        static const QRegularExpression kStart(
            QStringLiteral(R"(^func\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)\s*\{)"),
            QRegularExpression::MultilineOption);
        return splitBracketed(
            text, kStart,
            [](const QRegularExpressionMatch& m, const QString& body) {
                return TestBlock { m.captured(1), { m.captured(1) }, body };
            },
            QStringLiteral("//"));
    }
    return { text, {} };
}

QString joinTestFile(const QStringList& preambles, const QList<TestBlock>& tests)
{
    // Paragraph by paragraph (blank-line separated): a paragraph seen before is left out, and
    // of an import/include paragraph only the lines not seen before are kept, so that two
    // rounds' files with the same imports and helpers make one file that still builds.
    static const QRegularExpression kImport(QStringLiteral(
        R"(^\s*(import\s|from\s+\S+\s+import\s|#\s*include|using\s|package\s|const\s+.*=\s*require\())"));
    QStringList paragraphs;
    QSet<QString> seenParagraphs, seenImports;
    bool skipping = false; // the paragraph this indented one continues was left out
    for (const QString& preamble : preambles) {
        for (const QString& paragraph :
            preamble.split(QRegularExpression(QStringLiteral("\n[ \t]*\n")))) {
            QString body = paragraph;
            while (body.startsWith('\n'))
                body.remove(0, 1);
            while (body.endsWith('\n'))
                body.chop(1);
            if (body.trimmed().isEmpty())
                continue;
            if (body[0].isSpace() || body.startsWith(')') || body.startsWith('}')) {
                if (!skipping)
                    paragraphs.append(body); // inside a helper: goes with its start
                continue;
            }
            skipping = seenParagraphs.contains(body.trimmed());
            if (skipping)
                continue;
            seenParagraphs.insert(body.trimmed());
            QStringList kept;
            for (const QString& line : body.split('\n')) {
                if (kImport.match(line).hasMatch()) {
                    if (seenImports.contains(line.trimmed()))
                        continue;
                    seenImports.insert(line.trimmed());
                }
                kept.append(line);
            }
            if (!kept.join('\n').trimmed().isEmpty())
                paragraphs.append(kept.join('\n'));
        }
    }
    QString out = paragraphs.join(QStringLiteral("\n\n"));
    for (const TestBlock& block : tests) {
        if (!out.isEmpty())
            out += QStringLiteral("\n\n");
        out += block.text.trimmed();
    }
    return out.isEmpty() ? out : out + '\n';
}

bool blockOwnsCase(const TestBlock& block, const QString& caseName)
{
    QString name = caseName;
    if (const qsizetype bracket = name.indexOf('['); bracket > 0)
        name = name.left(bracket); // pytest's parametrized "test_x[3]"
    for (const QString& own : block.caseNames) {
        if (name == own || name.startsWith(own + '/'))
            return true;
    }
    return false;
}

} // namespace cw
