// `clausewright-cli history list|show|export|search|delete`: the review history the GUI keeps,
// read and managed from the shell. Same database file as the GUI unless --db says otherwise.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "app/history/history_database.h"
#include "app/report/report_exporter.h"
#include "app/review/review_summary.h"

#include <CLI/CLI.hpp>
#include <QGuiApplication>
#include <cstdio>
#include <memory>
#include <optional>

namespace {

void printError(const std::string& message)
{
    std::fprintf(stderr, "clausewright-cli history: %s\n", message.c_str());
}

std::string oneLine(const QString& text, int width)
{
    QString simple = text.simplified();
    if (simple.size() > width)
        simple = simple.left(width - 1) + QChar(0x2026);
    return simple.toStdString();
}

// A page number or count as the reports show it: "-" where the document has no pages.
std::string pageText(int page)
{
    return page > 0 ? std::to_string(page) : std::string("-");
}

int listReviews(cw::HistoryDatabase& db, int offset, int limit)
{
    cw::Result<cw::HistoryPage> page = db.list(offset, limit);
    if (!page) {
        printError(page.error().message);
        return 1;
    }
    if (page->total == 0) {
        std::printf("No saved reviews in %s\n", db.path().toStdString().c_str());
        return 0;
    }
    std::printf(
        "%-7s %-17s %5s %8s  %-8s %s\n", "ID", "DATE (UTC)", "PAGES", "FINDINGS", "H/M/L", "TITLE");
    for (const cw::HistoryEntry& e : page->entries) {
        const std::string risks
            = std::to_string(e.high) + "/" + std::to_string(e.medium) + "/" + std::to_string(e.low);
        std::printf("%-7lld %-17s %5s %8d  %-8s %s\n", static_cast<long long>(e.id),
            e.createdAt.toUTC().toString("yyyy-MM-dd HH:mm").toStdString().c_str(),
            pageText(e.pageCount).c_str(), e.findingCount, risks.c_str(),
            oneLine(e.title.isEmpty() ? e.documentPath : e.title, 60).c_str());
    }
    const qint64 shownFrom = page->entries.isEmpty() ? 0 : offset + 1;
    std::printf("\n%lld-%lld of %lld reviews (--offset, --limit to page)\n",
        static_cast<long long>(shownFrom), static_cast<long long>(offset + page->entries.size()),
        static_cast<long long>(page->total));
    return 0;
}

int showReview(cw::HistoryDatabase& db, qint64 id, bool json)
{
    cw::Result<cw::Review> review = db.load(id);
    if (!review) {
        printError(review.error().message);
        return 1;
    }
    if (json) {
        const QByteArray bytes = cw::reviewToJson(review.value());
        std::fwrite(bytes.constData(), 1, size_t(bytes.size()), stdout);
        return 0;
    }
    const cw::Review& r = review.value();
    // As the reports count them: the findings as they are now, corrections included.
    const cw::ReviewSummary summary = cw::summarizeFindings(r);
    std::printf(
        "Review %lld of %s\n", static_cast<long long>(r.id), r.document.path.toStdString().c_str());
    std::printf("  title:    %s\n  pages:    %s\n  sha256:   %s\n  model:    %s\n  playbook: %s\n"
                "  reviewed: %s\n  risks:    %d high, %d medium, %d low\n",
        r.document.title.toStdString().c_str(), pageText(r.document.pageCount()).c_str(),
        r.document.sha256.toStdString().c_str(),
        r.modelName.isEmpty() ? "none (fast heads only)" : r.modelName.toStdString().c_str(),
        r.playbookName.toStdString().c_str(),
        r.createdAt.toUTC().toString(Qt::ISODate).toStdString().c_str(), summary.high,
        summary.medium, summary.low);
    if (!summary.missingCategories.isEmpty())
        std::printf("  missing:  %s\n", summary.missingCategories.join(", ").toStdString().c_str());
    std::printf("\n%-4s %-6s %-28s %4s  %s\n", "#", "RISK", "CATEGORY", "PAGE", "TEXT");
    for (int i = 0; i < r.findings.size(); ++i) {
        const cw::Finding& f = r.findings[i];
        std::printf("%-4d %-6s %-28s %4s  %s%s\n", i, cw::riskName(f.risk).toStdString().c_str(),
            oneLine(f.category, 28).c_str(), pageText(f.page).c_str(), oneLine(f.text, 70).c_str(),
            f.userEdited ? "  (edited)" : "");
    }
    return 0;
}

int exportReview(cw::HistoryDatabase& db, qint64 id, const std::string& formatName,
    const std::string& out, int argc, char** argv)
{
    const std::optional<cw::ReportFormat> format
        = cw::reportFormatFromName(QString::fromStdString(formatName));
    if (!format) {
        printError("unknown format '" + formatName + "' (use pdf, html, md, json or csv)");
        return 2;
    }
    std::unique_ptr<QGuiApplication> gui; // the PDF needs fonts, hence a (headless) GUI app
    if (*format == cw::ReportFormat::Pdf && !QCoreApplication::instance()) {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        gui = std::make_unique<QGuiApplication>(argc, argv);
    }
    cw::Result<cw::Review> review = db.load(id);
    if (!review) {
        printError(review.error().message);
        return 1;
    }
    cw::Result<void> written
        = cw::exportReview(review.value(), *format, QString::fromStdString(out));
    if (!written) {
        printError(written.error().message);
        return 1;
    }
    std::printf("Wrote review %lld as %s to %s\n", static_cast<long long>(id),
        cw::reportFormatName(*format).toStdString().c_str(), out.c_str());
    return 0;
}

int searchReviews(cw::HistoryDatabase& db, const std::string& query, int limit)
{
    cw::Result<QList<cw::HistorySearchHit>> hits = db.search(QString::fromStdString(query), limit);
    if (!hits) {
        printError(hits.error().message);
        return 1;
    }
    if (hits->isEmpty()) {
        std::printf("No matches for %s\n", query.c_str());
        return 0;
    }
    for (const cw::HistorySearchHit& hit : hits.value()) {
        const std::string where = hit.where == QLatin1String("finding")
            ? "finding " + std::to_string(hit.findingIndex)
            : std::string("contract");
        std::printf("%-7lld %-11s %-30s %s\n", static_cast<long long>(hit.reviewId), where.c_str(),
            oneLine(hit.title, 30).c_str(), oneLine(hit.snippet, 100).c_str());
    }
    return 0;
}

int runHistory(std::span<char*> args)
{
    CLI::App app { "Saved reviews: list, show, export, search and delete them", "history" };
    cw::cli::showDefaultsInHelp(app);
    app.fallthrough();
    app.require_subcommand(1);
    std::string dbPath;
    app.add_option("--db", dbPath, "history database (default: the GUI's, under AppDataLocation)");

    int offset = 0;
    int limit = 20;
    auto* list = app.add_subcommand("list", "list saved reviews, newest first");
    list->add_option("--offset", offset, "skip this many reviews")->check(CLI::NonNegativeNumber);
    list->add_option("--limit", limit, "show at most this many")->check(CLI::Range(1, 100000));

    qint64 id = 0;
    bool json = false;
    auto* show = app.add_subcommand("show", "show one review and its findings");
    show->add_option("ID", id, "review id (see list)")->required();
    show->add_flag("--json", json, "print the review as JSON");

    std::string format;
    std::string out;
    auto* exportCommand = app.add_subcommand("export", "write a report of one review");
    exportCommand->add_option("ID", id, "review id")->required();
    exportCommand->add_option("--format", format, "pdf, html, md, json or csv")->required();
    exportCommand->add_option("--out", out, "output file")->required();

    std::string query;
    int searchLimit = 50;
    auto* search = app.add_subcommand("search", "full-text search over contracts and findings");
    search->add_option("QUERY", query, "words, \"phrases\", prefix*, AND/OR/NOT")->required();
    search->add_option("--limit", searchLimit, "at most this many matches")
        ->check(CLI::Range(1, 10000));

    auto* remove = app.add_subcommand("delete", "delete one review");
    remove->add_option("ID", id, "review id")->required();

    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }

    const QString path
        = dbPath.empty() ? cw::HistoryDatabase::defaultPath() : QString::fromStdString(dbPath);
    auto opened = cw::HistoryDatabase::open(path);
    if (!opened) {
        printError(opened.error().message);
        return 1;
    }
    cw::HistoryDatabase& db = *opened.value();
    if (list->parsed())
        return listReviews(db, offset, limit);
    if (show->parsed())
        return showReview(db, id, json);
    if (exportCommand->parsed())
        return exportReview(db, id, format, out, int(args.size()), args.data());
    if (search->parsed())
        return searchReviews(db, query, searchLimit);
    cw::Result<void> removed = db.remove(id);
    if (!removed) {
        printError(removed.error().message);
        return 1;
    }
    std::printf("Deleted review %lld\n", static_cast<long long>(id));
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "history",
    "list, show, export, search or delete saved reviews", runHistory } };

} // namespace
