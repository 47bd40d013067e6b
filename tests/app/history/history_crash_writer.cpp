// Saves reviews into a history database in a loop, for history_durability_test to kill.
//   history_crash_writer DB FIRST [PAUSE_AT]
// Review n (from FIRST on) has document title "durability n" and 30 + n % 7 findings. Before
// COMMIT it prints "inside n" (and for n == PAUSE_AT sleeps 5 s there, so the kill lands
// inside the transaction); after the commit it prints "committed n ID".
#include "app/history/history_database.h"
#include "tests/app/report/sample_review.h"

#include <QThread>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: history_crash_writer DB FIRST [PAUSE_AT]\n");
        return 2;
    }
    const int pauseAt = argc > 3 ? std::atoi(argv[3]) : -1;
    auto opened = cw::HistoryDatabase::open(QString::fromLocal8Bit(argv[1]));
    if (!opened) {
        std::fprintf(stderr, "%s\n", opened.error().message.c_str());
        return 1;
    }
    cw::HistoryDatabase& db = *opened.value();
    int current = std::atoi(argv[2]);
    db.setBeforeCommitHook([&] {
        std::printf("inside %d\n", current);
        std::fflush(stdout);
        if (current == pauseAt)
            QThread::msleep(5000);
    });
    for (;; ++current) {
        cw::Review review = cw::testing::sampleReview();
        review.document.title = QStringLiteral("durability %1").arg(current);
        review.document.path = QStringLiteral("/contracts/durability-%1.pdf").arg(current);
        const cw::Finding base = review.findings[0];
        review.findings.clear();
        for (int i = 0; i < 30 + current % 7; ++i) {
            cw::Finding finding = base;
            finding.rationale = QStringLiteral("finding %1 of review %2").arg(i).arg(current);
            review.findings.append(finding);
        }
        cw::Result<qint64> id = db.save(review);
        if (!id) {
            std::fprintf(stderr, "%s\n", id.error().message.c_str());
            return 1;
        }
        std::printf("committed %d %lld\n", current, static_cast<long long>(id.value()));
        std::fflush(stdout);
    }
}
