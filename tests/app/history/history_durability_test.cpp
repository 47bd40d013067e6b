// Kills a process that is saving reviews (SIGKILL, no chance to clean up) again and again,
// then checks that the database is intact, every committed review is complete and the
// review being saved at the kill is absent.
#include "app/history/history_database.h"

#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <sys/types.h>

using namespace cw;

namespace {

struct WriterRun {
    QList<int> committed; // review numbers whose commit was reported
    int inside = -1; // the last review number the writer reported being inside
};

void parseLines(QByteArray& pending, WriterRun& run)
{
    qsizetype newline = 0;
    while ((newline = pending.indexOf('\n')) >= 0) {
        const QList<QByteArray> words = pending.left(newline).split(' ');
        pending.remove(0, newline + 1);
        if (words.size() >= 2 && words[0] == "committed")
            run.committed.append(words[1].toInt());
        if (words.size() >= 2 && words[0] == "inside")
            run.inside = words[1].toInt();
    }
}

// Starts the writer at review `first` and kills it (SIGKILL) with `count` reviews committed:
// with `pauseInside`, while the writer sleeps inside the transaction of review first + count;
// otherwise at a random moment up to 20 ms after the count-th commit was reported.
WriterRun runAndKill(const QString& db, int first, int count, bool pauseInside)
{
    WriterRun run;
    QProcess writer;
    QStringList arguments { db, QString::number(first) };
    if (pauseInside)
        arguments.append(QString::number(first + count));
    writer.start(CW_HISTORY_CRASH_WRITER, arguments);
    if (!writer.waitForStarted(10000))
        return run;
    QByteArray pending;
    while (writer.state() == QProcess::Running) {
        writer.waitForReadyRead(10000);
        pending += writer.readAllStandardOutput();
        parseLines(pending, run);
        const bool due = pauseInside ? run.inside == first + count : run.committed.size() >= count;
        if (due) {
            if (!pauseInside)
                QThread::usleep(QRandomGenerator::global()->bounded(1, 20000));
            ::kill(pid_t(writer.processId()), SIGKILL);
            break;
        }
    }
    writer.waitForFinished(10000);
    pending += writer.readAllStandardOutput();
    pending += '\n';
    parseLines(pending, run);
    return run;
}

} // namespace

class HistoryDurabilityTest : public QObject {
    Q_OBJECT
private slots:
    void killedWriterLosesOnlyTheReviewInProgress();
};

void HistoryDurabilityTest::killedWriterLosesOnlyTheReviewInProgress()
{
    QTemporaryDir dir;
    const QString path = dir.filePath("history.sqlite");
    QList<int> committed;
    QList<int> killedInside; // numbers whose transaction was certainly cut short
    int next = 1;
    for (int round = 0; round < 8; ++round) {
        const bool pause = round % 2 == 0; // even rounds: kill inside the transaction
        const int count = 2 + round % 3;
        const WriterRun run = runAndKill(path, next, count, pause);
        QVERIFY2(!run.committed.isEmpty(), "the writer committed nothing");
        committed += run.committed;
        if (pause) {
            QCOMPARE(run.committed.size(), count);
            QCOMPARE(run.inside, next + count);
            killedInside.append(run.inside);
        }
        next = std::max(run.committed.last(), run.inside) + 1;
    }
    QVERIFY(killedInside.size() >= 4);

    auto opened = HistoryDatabase::open(path);
    QVERIFY2(opened.ok(), opened.ok() ? "" : opened.error().message.c_str());
    HistoryDatabase& db = *opened.value();
    QCOMPARE(db.integrityCheck().value(), QStringLiteral("ok"));

    Result<HistoryPage> page = db.list(0, 100000);
    QVERIFY(page.ok());
    QSet<int> present;
    for (const HistoryEntry& entry : page->entries) {
        const int number = entry.title.section(' ', 1).toInt();
        present.insert(number);
        // Every review in the file is complete, whichever run wrote it.
        Result<Review> review = db.load(entry.id);
        QVERIFY2(review.ok(), review.ok() ? "" : review.error().message.c_str());
        QCOMPARE(review->findings.size(), 30 + number % 7);
        QCOMPARE(entry.findingCount, 30 + number % 7);
        QCOMPARE(review->clauses.size(), 4);
        QVERIFY(review->document.text.contains("SUPPLY AGREEMENT"));
        QCOMPARE(review->findings.last().rationale,
            QStringLiteral("finding %1 of review %2").arg(30 + number % 7 - 1).arg(number));
    }
    for (const int number : committed)
        QVERIFY2(present.contains(number), qPrintable(QString("review %1 was lost").arg(number)));
    for (const int number : killedInside)
        QVERIFY2(!present.contains(number),
            qPrintable(QString("half-saved review %1 is present").arg(number)));
    // At most the review in progress at each random kill is present beyond those reported.
    QVERIFY(present.size() <= committed.size() + 4);
    QVERIFY(db.save(Review {}).ok()); // and the database still takes writes
}

QTEST_MAIN(HistoryDurabilityTest)
#include "history_durability_test.moc"
