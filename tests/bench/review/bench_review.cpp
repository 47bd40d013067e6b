// bench_review [PDF]: times the fast review (read, segment, heads, playbook) of a contract.
// Without an argument it writes a 50-page PDF made of real contract text (the held-out
// CUAD contracts of tests/data/heads, repeated) and reviews that. Prints one line per run
// and the median.
#include "app/heads/cuad_dataset.h"
#include "app/review/review_pipeline.h"

#include <QElapsedTimer>
#include <QGuiApplication>
#include <QPageSize>
#include <QPdfWriter>
#include <QTemporaryDir>
#include <QTextDocument>
#include <algorithm>
#include <cstdio>

namespace {

QString makeFiftyPagePdf(const QString& folder)
{
    auto contracts = cw::heads::readLabelledContracts(
        QStringLiteral(CW_TEST_DATA_DIR "/heads/heldout.jsonl.xz"));
    if (!contracts)
        return {};
    const QString path = folder + "/fifty-pages.pdf";
    QString text;
    QPdfWriter writer(path);
    writer.setPageSize(QPageSize(QPageSize::Letter));
    writer.setResolution(72);
    QTextDocument document;
    document.setPageSize(QSizeF(612, 792));
    for (int round = 0; document.pageCount() < 50 && round < 20; ++round) {
        for (const auto& c : *contracts)
            text += c.text + "\n\n";
        document.setPlainText(text);
    }
    while (document.pageCount() > 50) {
        text.chop(text.size() / 50);
        document.setPlainText(text);
    }
    document.print(&writer);
    std::printf("generated %s: %d pages, %lld characters\n", qPrintable(path), document.pageCount(),
        qlonglong(text.size()));
    return path;
}

} // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    QTemporaryDir dir;
    const QString path = argc > 1 ? QString::fromLocal8Bit(argv[1]) : makeFiftyPagePdf(dir.path());
    if (path.isEmpty()) {
        std::fprintf(stderr, "bench_review: cannot read the test contracts\n");
        return 1;
    }
    std::vector<double> times;
    for (int run = 0; run < 5; ++run) {
        QElapsedTimer timer;
        timer.start();
        auto review = cw::ReviewPipeline::runBlocking(path, cw::ReviewOptions {});
        const double ms = double(timer.nsecsElapsed()) / 1e6;
        if (!review) {
            std::fprintf(stderr, "bench_review: %s\n", review.error().message.c_str());
            return 1;
        }
        times.push_back(ms);
        std::printf("run %d: %.0f ms total (ingest %lld, segment %lld, heads %lld, playbook %lld "
                    "ms), %d pages, "
                    "%lld clauses, %lld findings\n",
            run + 1, ms, review->timingsMs.value("ingest"), review->timingsMs.value("segment"),
            review->timingsMs.value("heads"), review->timingsMs.value("playbook"),
            review->document.pageCount(), qlonglong(review->clauses.size()),
            qlonglong(review->findings.size()));
    }
    std::sort(times.begin(), times.end());
    std::printf("median fast review: %.0f ms\n", times[times.size() / 2]);
    return 0;
}
