// history_bench [--db PATH] [--reviews N] [--findings N] [--documents N]
// Fills a history database with N reviews (default 10,000) of ~30 findings each over a set
// of shared documents (default 200, ~40 KB of text each), then times what the history view
// does: open the database, count the reviews and read the first page of the list; a
// full-text search; loading one full review; and the same list through the async
// HistoryStore as the GUI uses it. An existing --db with enough reviews is reused.
#include "app/history/history_database.h"
#include "app/history/history_store.h"

#include <QCoreApplication>
#include <QCoroTask>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

namespace {

const char* const kWords[] = { "agreement", "party", "parties", "shall", "supplier", "customer",
    "services", "payment", "invoice", "days", "notice", "term", "terminate", "breach", "liability",
    "indemnify", "damages", "confidential", "information", "law", "court", "warranty", "goods",
    "delivery", "price", "fees", "rights", "license", "the", "of", "and", "to", "in", "any", "such",
    "by", "with", "under", "this", "written", "consent", "period" };
const char* const kCategories[]
    = { "Governing Law", "Renewal Term", "Notice Period To Terminate Renewal", "Cap On Liability",
          "Uncapped Liability", "Indemnification", "Non-Compete", "Exclusivity", "Audit Rights",
          "Insurance", "License Grant", "Termination For Convenience", "Anti-Assignment",
          "Warranty Duration", "Confidentiality", "Expiration Date", "Effective Date", "Parties" };
// Every tenth document is a Chinese contract (searched through the trigram index).
const char* const kChineseWords[] = { "本协议", "双方", "甲方", "乙方", "应当", "保密义务", "违约责任",
    "适用法律", "争议解决", "终止", "付款", "期限", "书面通知", "赔偿", "知识产权", "不可抗力", "服务费",
    "交付", "验收", "保证" };
const char* const kLaws[] = { "Delaware", "New York", "California", "England", "Ontario", "Texas" };

QString sentence(QRandomGenerator& random, int words)
{
    QStringList out;
    for (int i = 0; i < words; ++i)
        out.append(QString::fromLatin1(kWords[random.bounded(int(std::size(kWords)))]));
    out[0][0] = out[0][0].toUpper();
    return out.join(' ') + QStringLiteral(". ");
}

QString chineseSentence(QRandomGenerator& random, int words)
{
    QString out;
    for (int i = 0; i < words; ++i)
        out += QString::fromUtf8(kChineseWords[random.bounded(int(std::size(kChineseWords)))]);
    return out + QStringLiteral("。");
}

cw::Document makeDocument(QRandomGenerator& random, int n)
{
    const bool chinese = n % 10 == 9;
    cw::Document d;
    d.path = QStringLiteral("/contracts/agreement-%1.pdf").arg(n);
    d.title = QStringLiteral("Master Services Agreement %1").arg(n);
    d.format = cw::DocumentFormat::Pdf;
    d.sha256 = QStringLiteral("%1").arg(n, 64, 16, QLatin1Char('0'));
    QString text;
    for (int page = 1; page <= 20; ++page) {
        d.pages.append(cw::PageInfo { page, QSizeF(612, 792), true });
        for (int line = 0; line < 12; ++line) {
            const qsizetype start = text.size();
            text += chinese ? chineseSentence(random, 12 + random.bounded(6))
                            : sentence(random, 20 + random.bounded(10));
            if (random.bounded(40) == 0)
                text += QStringLiteral("This Agreement is governed by the laws of %1. ")
                            .arg(kLaws[random.bounded(int(std::size(kLaws)))]);
            d.lines.append(cw::TextLine {
                page, QRectF(72, 72 + 14 * line, 460, 12), start, text.size(), false, 11 });
        }
    }
    d.text = text;
    return d;
}

cw::Review makeReview(QRandomGenerator& random, const cw::Document& document, int findings)
{
    cw::Review r;
    r.document = document;
    const int clauses = 40;
    const qsizetype span = document.text.size() / clauses;
    for (int i = 0; i < clauses; ++i) {
        cw::Clause c;
        c.index = i;
        c.number = QStringLiteral("%1.").arg(i + 1);
        c.heading = QString::fromLatin1(kCategories[i % int(std::size(kCategories))]);
        c.start = i * span;
        c.end = c.ownEnd = (i + 1) * span;
        c.page = 1 + i / 2;
        r.clauses.append(c);
    }
    for (int i = 0; i < findings; ++i) {
        cw::Finding f;
        const int clause = random.bounded(clauses);
        f.clauseIndex = clause;
        f.category = QString::fromLatin1(kCategories[random.bounded(int(std::size(kCategories)))]);
        f.start = r.clauses[clause].start + random.bounded(int(span / 2));
        f.end = f.start + 150 + random.bounded(150);
        f.text = document.text.mid(f.start, f.end - f.start);
        f.page = r.clauses[clause].page;
        f.confidence = random.bounded(1000) / 1000.0;
        f.risk = cw::Risk(random.bounded(4));
        f.ruleId = QStringLiteral("rule.%1").arg(random.bounded(50));
        f.rationale = sentence(random, 12);
        f.source = random.bounded(3) == 0 ? QStringLiteral("llm") : QStringLiteral("fast");
        f.fields = QJsonObject { { "days", random.bounded(120) } };
        r.findings.append(f);
    }
    r.modelName = QStringLiteral("Qwen3.6-35B-A3B Q4_K_M");
    r.playbookName = QStringLiteral("Default buyer playbook");
    r.settings = QJsonObject { { "device", "cuda:0" }, { "context", 32768 } };
    r.timingsMs = { { "ingest", 800 }, { "segment", 12 }, { "heads", 90 }, { "llm", 21000 } };
    r.summary.text = QStringLiteral("Generated review.");
    r.createdAt = QDateTime::currentDateTimeUtc().addSecs(-random.bounded(3600 * 24 * 365));
    return r;
}

// Runs the event loop until the task finishes (QCoro::waitFor needs a default-constructible
// result, which cw::Result is not).
template <typename T> T finish(QCoro::Task<T>&& task)
{
    std::optional<T> result;
    QEventLoop loop;
    auto runner = [&](QCoro::Task<T> inner) -> QCoro::Task<> {
        result.emplace(co_await inner);
        loop.quit();
    };
    QCoro::Task<> running = runner(std::move(task));
    if (!result)
        loop.exec();
    return std::move(*result);
}

double ms(const QElapsedTimer& timer)
{
    return double(timer.nsecsElapsed()) / 1e6;
}

double median(std::vector<double> values)
{
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QString dbPath;
    int reviews = 10000;
    int findings = 30;
    int documents = 200;
    const QStringList args = app.arguments();
    for (int i = 1; i + 1 < args.size(); i += 2) {
        if (args[i] == "--db")
            dbPath = args[i + 1];
        else if (args[i] == "--reviews")
            reviews = std::max(1, args[i + 1].toInt());
        else if (args[i] == "--findings")
            findings = std::max(1, args[i + 1].toInt());
        else if (args[i] == "--documents")
            documents = std::max(1, args[i + 1].toInt());
    }
    QTemporaryDir temp;
    if (dbPath.isEmpty())
        dbPath = temp.filePath("history.sqlite");

    {
        auto opened = cw::HistoryDatabase::open(dbPath);
        if (!opened) {
            std::fprintf(stderr, "%s\n", opened.error().message.c_str());
            return 1;
        }
        cw::HistoryDatabase& db = *opened.value();
        const qint64 existing = db.count().value();
        if (existing < reviews) {
            QRandomGenerator random(20261130);
            std::vector<cw::Document> docs;
            for (int i = 0; i < documents; ++i)
                docs.push_back(makeDocument(random, i));
            QElapsedTimer timer;
            timer.start();
            for (qint64 i = existing; i < reviews; ++i) {
                cw::Result<qint64> id
                    = db.save(makeReview(random, docs[size_t(i % documents)], findings));
                if (!id) {
                    std::fprintf(stderr, "%s\n", id.error().message.c_str());
                    return 1;
                }
            }
            const double seconds = ms(timer) / 1000.0;
            std::printf("generate: %lld reviews x %d findings over %d documents in %.1f s "
                        "(%.1f ms per save)\n",
                static_cast<long long>(reviews - existing), findings, documents, seconds,
                seconds * 1000.0 / double(reviews - existing));
        }
    }
    std::printf("database: %s, %.1f MB (+ WAL %.1f MB)\n", qPrintable(dbPath),
        double(QFileInfo(dbPath).size()) / 1e6, double(QFileInfo(dbPath + "-wal").size()) / 1e6);

    // What the history view does when it opens: open the file, count, first page.
    QElapsedTimer timer;
    timer.start();
    auto opened = cw::HistoryDatabase::open(dbPath);
    const double openMs = ms(timer);
    cw::HistoryDatabase& db = *opened.value();
    timer.restart();
    cw::Result<cw::HistoryPage> first = db.list(0, 100);
    const double firstListMs = ms(timer);
    std::vector<double> lists;
    for (int i = 0; i < 9; ++i) {
        timer.restart();
        (void)db.list(0, 100);
        lists.push_back(ms(timer));
    }
    std::printf("history list: open %.2f ms; count + first page of 100 (of %lld): first %.2f ms, "
                "median %.2f ms; open + first page %.2f ms (target < 500 ms)\n",
        openMs, static_cast<long long>(first->total), firstListMs, median(lists),
        openMs + firstListMs);
    timer.restart();
    (void)db.list(int(first->total) - 100, 100);
    std::printf("history list: last page %.2f ms\n", ms(timer));

    // Selective words and phrases, words found in most findings ("shall", "the"), Chinese
    // substrings of 3+ characters (trigram index) and of 2 (LIKE over the newest reviews).
    const char* const queries[] = { "indemnify", "\"governed by the laws of\" delaware",
        "confidential AND breach", "terminat*", "ontario", "shall", "the", "保密义务",
        "违约责任 赔偿", "甲方", "付款" };
    for (const char* query : queries) {
        std::vector<double> times;
        qsizetype hits = 0;
        for (int i = 0; i < 3; ++i) {
            timer.restart();
            cw::Result<QList<cw::HistorySearchHit>> found = db.search(QString::fromUtf8(query), 50);
            times.push_back(ms(timer));
            hits = found ? found->size() : -1;
        }
        std::printf("search %s: %lld hits (limit 50): first %.1f ms, median %.1f ms\n", query,
            static_cast<long long>(hits), times[0], median(times));
    }

    std::vector<double> loads;
    QRandomGenerator random(7);
    for (int i = 0; i < 20; ++i) {
        const qint64 id = first->entries[random.bounded(int(first->entries.size()))].id;
        timer.restart();
        cw::Result<cw::Review> review = db.load(id);
        loads.push_back(ms(timer));
        if (!review)
            return 1;
    }
    std::printf("load one full review (%d findings, 40 clauses, 240 lines of layout): median "
                "%.2f ms\n",
        findings, median(loads));
    opened.value().reset();

    // The GUI path: HistoryStore on its own thread, awaited from this (the UI) thread.
    timer.restart();
    cw::HistoryStore store(dbPath);
    cw::Result<cw::HistoryPage> page = finish(store.list(0, 100));
    std::printf("HistoryStore (worker thread): open + count + first page %.2f ms, %lld rows\n",
        ms(timer), static_cast<long long>(page ? page->entries.size() : -1));
    return 0;
}
