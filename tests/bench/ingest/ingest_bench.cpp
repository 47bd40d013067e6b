// bench_ingest [FILE.pdf ...]: time to read (and to reach page 1), segment, and peak memory
// for each file. Without files it writes 50- and 100-page contracts with QPdfWriter from the
// CUAD texts in tests/data/segment and measures those.
#include "app/ingest/document_reader.h"
#include "app/segment/clause_segmenter.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QGuiApplication>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QTemporaryDir>
#include <QTextDocument>
#include <cstdio>
#include <lzma.h>
#include <sys/resource.h>

namespace {

QString readXz(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QByteArray packed = file.readAll();
    QByteArray out(qsizetype(8) << 20, Qt::Uninitialized);
    uint64_t memlimit = uint64_t(256) << 20;
    size_t inPos = 0;
    size_t outPos = 0;
    if (lzma_stream_buffer_decode(&memlimit, 0, nullptr,
            reinterpret_cast<const uint8_t*>(packed.constData()), &inPos, size_t(packed.size()),
            reinterpret_cast<uint8_t*>(out.data()), &outPos, size_t(out.size()))
        != LZMA_OK)
        return {};
    out.resize(qsizetype(outPos));
    return QString::fromUtf8(out);
}

// Lays out contract text on Letter pages until `pages` pages are written.
bool writeContractPdf(const QString& path, int pages)
{
    QString text;
    const QDir data(QStringLiteral(CW_TEST_DATA_DIR "/segment"));
    const QStringList names
        = data.entryList({ QStringLiteral("*.txt.xz") }, QDir::Files, QDir::Name);
    QPdfWriter writer(path);
    writer.setPageSize(QPageSize(QPageSize::Letter));
    writer.setResolution(72);
    writer.setPageMargins(QMarginsF(72, 72, 72, 72), QPageLayout::Point);
    QPainter painter(&writer);
    QFont font(QStringLiteral("DejaVu Serif"));
    font.setPixelSize(11);
    painter.setFont(font);
    const QRect area = painter.viewport();
    int page = 1;
    int y = 0;
    for (int round = 0; page <= pages; ++round) {
        for (const QString& name : names) {
            const QString contract = readXz(data.filePath(name));
            for (const QString& paragraph : contract.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
                if (page > pages)
                    break;
                QTextDocument block;
                block.setDefaultFont(font);
                block.setTextWidth(area.width());
                block.setPlainText(paragraph.simplified());
                const int height = int(block.size().height()) + 6;
                if (y + height > area.height()) {
                    if (++page > pages)
                        break;
                    writer.newPage();
                    y = 0;
                }
                painter.save();
                painter.translate(0, y);
                block.drawContents(&painter);
                painter.restore();
                y += height;
            }
        }
        if (round > 50)
            return false;
    }
    return painter.end();
}

double cpuSeconds()
{
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

long peakRssMiB()
{
    rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024;
}

void measure(const QString& path)
{
    QElapsedTimer timer;
    timer.start();
    const double cpuStart = cpuSeconds();
    qint64 firstPageMs = -1;
    cw::ReadOptions options;
    options.progress = [&](int done, int) {
        if (done == 1)
            firstPageMs = timer.elapsed();
        return true;
    };
    auto document = cw::readDocument(path, options);
    const qint64 readMs = timer.restart();
    if (!document) {
        std::printf("%s: %s\n", qPrintable(path), document.error().message.c_str());
        return;
    }
    const QList<cw::Clause> clauses = cw::segmentClauses(*document);
    const qint64 segmentMs = timer.elapsed();
    const double cpuMs = (cpuSeconds() - cpuStart) * 1000.0;
    std::printf(
        "%-60s %4d pages %8lld chars  page 1 after %5lld ms  read %6lld ms (%5.1f ms/page)  "
        "segment %4lld ms (%4lld clauses)  total %6lld ms wall, %6.0f ms CPU  peak RSS %ld MiB\n",
        qPrintable(QFileInfo(path).fileName().left(60)), document->pageCount(),
        static_cast<long long>(document->text.size()), static_cast<long long>(firstPageMs),
        static_cast<long long>(readMs), double(readMs) / std::max(1, document->pageCount()),
        static_cast<long long>(segmentMs), static_cast<long long>(clauses.size()),
        static_cast<long long>(readMs + segmentMs), cpuMs, peakRssMiB());
}

} // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM",
        qgetenv("QT_QPA_PLATFORM").isEmpty() ? "offscreen" : qgetenv("QT_QPA_PLATFORM"));
    QGuiApplication app(argc, argv);
    QStringList files;
    for (int i = 1; i < argc; ++i)
        files.append(QString::fromLocal8Bit(argv[i]));
    QTemporaryDir scratch;
    if (files.isEmpty()) {
        for (int pages : { 50, 100 }) {
            const QString path
                = scratch.filePath(QStringLiteral("contract-%1-pages.pdf").arg(pages));
            if (!writeContractPdf(path, pages)) {
                std::fprintf(stderr, "bench_ingest: could not write %s\n", qPrintable(path));
                return 1;
            }
            files.append(path);
        }
    }
    for (const QString& file : files)
        measure(file);
    return 0;
}
