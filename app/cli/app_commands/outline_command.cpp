// `clausewright-cli outline FILE`: read a contract and print its pages, warnings and the
// numbered sections and clauses the segmenter found.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "app/ingest/document_reader.h"
#include "app/segment/clause_segmenter.h"

#include <CLI/CLI.hpp>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cstdio>
#include <vector>

namespace {

const char* formatName(cw::DocumentFormat format)
{
    switch (format) {
    case cw::DocumentFormat::Pdf:
        return "pdf";
    case cw::DocumentFormat::Docx:
        return "docx";
    case cw::DocumentFormat::PlainText:
        break;
    }
    return "text";
}

const char* kindName(cw::ClauseKind kind)
{
    switch (kind) {
    case cw::ClauseKind::Preamble:
        return "preamble";
    case cw::ClauseKind::Numbered:
        return "numbered";
    case cw::ClauseKind::Heading:
        return "heading";
    case cw::ClauseKind::Definition:
        return "definition";
    case cw::ClauseKind::Attachment:
        return "attachment";
    }
    return "numbered";
}

// The clause's first words after its number and heading, on one line.
QString firstWords(const cw::Document& document, const cw::Clause& clause, int words)
{
    QString text
        = document.text.mid(clause.start, std::min<qsizetype>(clause.ownEnd - clause.start, 400));
    if (!clause.number.isEmpty() && text.startsWith(clause.number))
        text = text.mid(clause.number.size());
    text = text.simplified();
    if (!clause.heading.isEmpty() && text.startsWith(clause.heading))
        text = text.mid(clause.heading.size());
    while (!text.isEmpty()
        && (text.front() == QLatin1Char('.') || text.front() == QLatin1Char(':')
            || text.front().isSpace()))
        text.remove(0, 1);
    const QStringList list = text.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    QString out = list.mid(0, words).join(QLatin1Char(' '));
    if (list.size() > words)
        out += QStringLiteral(" ...");
    return out;
}

// Code point index of every UTF-16 index, for offsets in JSON.
std::vector<qsizetype> codePointIndex(const QString& text)
{
    std::vector<qsizetype> index(std::size_t(text.size()) + 1);
    qsizetype points = 0;
    for (qsizetype i = 0; i < text.size(); ++i) {
        index[std::size_t(i)] = points;
        if (!(text.at(i).isHighSurrogate() && i + 1 < text.size()
                && text.at(i + 1).isLowSurrogate()))
            ++points;
    }
    index[std::size_t(text.size())] = points;
    return index;
}

void printJson(
    const cw::Document& document, const QList<cw::Clause>& clauses, qint64 readMs, qint64 segmentMs)
{
    const auto points = codePointIndex(document.text);
    QJsonArray list;
    for (const cw::Clause& clause : clauses) {
        list.append(QJsonObject { { "index", clause.index }, { "number", clause.number },
            { "heading", clause.heading }, { "kind", kindName(clause.kind) },
            { "level", clause.level }, { "parent", clause.parent }, { "page", clause.page },
            { "start", qint64(points[std::size_t(clause.start)]) },
            { "end", qint64(points[std::size_t(clause.end)]) },
            { "first_words", firstWords(document, clause, 12) } });
    }
    QJsonArray warnings;
    for (const QString& warning : document.warnings)
        warnings.append(warning);
    const QJsonObject root { { "path", document.path }, { "format", formatName(document.format) },
        { "title", document.title }, { "sha256", document.sha256 },
        { "pages", document.pageCount() }, { "characters", qint64(points.back()) },
        { "offsets", "unicode code points into the extracted text" }, { "warnings", warnings },
        { "timings_ms", QJsonObject { { "ingest", readMs }, { "segment", segmentMs } } },
        { "clauses", list } };
    std::printf("%s", QJsonDocument(root).toJson(QJsonDocument::Indented).constData());
}

void printText(const cw::Document& document, const QList<cw::Clause>& clauses, int depth,
    qint64 readMs, qint64 segmentMs)
{
    std::printf("%s\n", qPrintable(document.path));
    std::printf("  title:    %s\n", qPrintable(document.title));
    std::printf("  format:   %s, %d page%s, %lld characters\n", formatName(document.format),
        document.pageCount(), document.pageCount() == 1 ? "" : "s",
        static_cast<long long>(document.text.size()));
    std::printf("  sha256:   %s\n", qPrintable(document.sha256));
    std::printf("  read in %lld ms, segmented in %lld ms\n", static_cast<long long>(readMs),
        static_cast<long long>(segmentMs));
    for (const QString& warning : document.warnings)
        std::printf("  warning:  %s\n", qPrintable(warning));
    int shown = 0;
    for (const cw::Clause& clause : clauses)
        shown += clause.level <= depth ? 1 : 0;
    std::printf("\nOutline (%d of %lld clauses; page, number, heading, first words):\n", shown,
        static_cast<long long>(clauses.size()));
    for (const cw::Clause& clause : clauses) {
        if (clause.level > depth)
            continue;
        const QString indent(clause.level * 2, QLatin1Char(' '));
        QString label = clause.kind == cw::ClauseKind::Preamble ? QStringLiteral("(preamble)")
                                                                : clause.number;
        if (clause.kind == cw::ClauseKind::Definition && clause.number.isEmpty())
            label = QStringLiteral("(definition)");
        QString line = indent + label;
        if (!clause.heading.isEmpty())
            line += QStringLiteral("  ") + clause.heading;
        const QString words = firstWords(document, clause, 10);
        if (!words.isEmpty())
            line += QStringLiteral(" | ") + words;
        const QString page
            = clause.page > 0 ? QStringLiteral("p%1").arg(clause.page) : QStringLiteral("-");
        std::printf("%5s  %s\n", qPrintable(page), qPrintable(line));
    }
}

int runOutline(std::span<char*> args)
{
    CLI::App app { "Read a contract (PDF, DOCX or text) and print its pages, warnings and the "
                   "numbered sections and clauses found in it",
        "outline" };
    cw::cli::showDefaultsInHelp(app);
    std::string file;
    bool asJson = false;
    bool textOnly = false;
    int depth = 99;
    app.add_option("FILE", file, "the contract: .pdf, .docx or .txt")->required();
    app.add_flag("--json", asJson, "print JSON (offsets in Unicode code points)");
    app.add_flag("--text-only", textOnly, "read the file as plain text, unchanged");
    app.add_option("--depth", depth, "show clauses down to this nesting level (0: top level)");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    int argc = 1;
    char name[] = "clausewright-cli";
    char* argv[] = { name, nullptr };
    QCoreApplication qtApp(argc, argv);

    QElapsedTimer timer;
    timer.start();
    const QString path = QString::fromLocal8Bit(file.c_str());
    cw::Result<cw::Document> document = textOnly ? cw::readText(path) : cw::readDocument(path);
    const qint64 readMs = timer.restart();
    if (!document) {
        std::fprintf(stderr, "clausewright-cli outline: %s\n", document.error().message.c_str());
        return 1;
    }
    const QList<cw::Clause> clauses = cw::segmentClauses(*document);
    const qint64 segmentMs = timer.elapsed();
    if (asJson)
        printJson(*document, clauses, readMs, segmentMs);
    else
        printText(*document, clauses, depth, readMs, segmentMs);
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "outline",
    "print a contract's pages, warnings and numbered sections and clauses", runOutline } };

} // namespace
