// The PDF page renderer: Poppler's first renders may run on many threads at once, an image
// larger than the whole page cache is still shown, and the text of a selection is read on a
// worker while a render holds the document.
#include "app/ingest/poppler_threads.h"
#include "app/render/pdf_page_renderer.h"

#include <QSignalSpy>
#include <QtTest>
#include <atomic>
#include <poppler-qt6.h>
#include <thread>
#include <vector>

using namespace cw;

namespace {
const QString kSample = QStringLiteral(CW_SOURCE_DIR "/resources/samples/sample-contract.pdf");
}

class PdfPageRendererTest : public QObject {
    Q_OBJECT
private slots:
    // First in this process on purpose: Poppler builds its colour-management state in the
    // first page it draws, and several threads drawing their first pages at once corrupted
    // the heap (a crash in lcms2 under the review's reader and the preview's renderer).
    void firstRendersOnManyThreadsAtOnce()
    {
        preparePopplerForThreads();
        std::atomic<int> rendered = 0;
        std::vector<std::thread> threads;
        for (int t = 0; t < 8; ++t) {
            threads.emplace_back([&rendered] {
                std::unique_ptr<Poppler::Document> document = Poppler::Document::load(kSample);
                std::unique_ptr<Poppler::Page> page = document ? document->page(0) : nullptr;
                if (page && !page->renderToImage(18.0, 18.0).isNull()
                    && !page->text(QRectF()).isEmpty())
                    ++rendered;
            });
        }
        for (std::thread& thread : threads)
            thread.join();
        QCOMPARE(rendered.load(), 8);
    }

    void showsAPageLargerThanTheCache()
    {
        // A 1 MiB cache and a page at 150 dpi (about 8 MiB): as zoom 6 at device pixel ratio 2
        // against the 256 MiB cache. QCache refuses such an image; the page must still appear
        // once rendered, not be rendered again on every repaint.
        PdfPageRenderer renderer(nullptr, 1024);
        const auto opened = renderer.open(kSample);
        QVERIFY2(opened.ok(), opened.ok() ? "" : opened.error().message.c_str());
        QSignalSpy rendered(&renderer, &PdfPageRenderer::pageRendered);
        QVERIFY(renderer.page(0, 150.0).isNull());
        QVERIFY(rendered.wait(30000));
        const QImage image = renderer.page(0, 150.0);
        QVERIFY2(!image.isNull(), "the oversized page was dropped: it would re-render forever");
        QVERIFY(image.sizeInBytes() > 1024 * 1024);
        QVERIFY(!rendered.wait(300)); // and no second render was queued
        // A page that fits still goes through the cache.
        QVERIFY(renderer.page(1, 18.0).isNull());
        QVERIFY(rendered.wait(30000));
        QVERIFY(!renderer.page(1, 18.0).isNull());
    }

    void selectionTextDoesNotWaitForARender()
    {
        PdfPageRenderer renderer;
        QVERIFY(renderer.open(kSample).ok());
        QFuture<QString> text;
        {
            // A long render holds the document; asking for text returns at once.
            const auto held = renderer.holdDocumentForTesting();
            QElapsedTimer timer;
            timer.start();
            text = renderer.textInAsync({ { 0, QRectF(0, 0, 612, 792) } });
            QVERIFY(timer.elapsed() < 100);
            QTest::qWait(50);
            QVERIFY(!text.isFinished());
        }
        text.waitForFinished();
        QVERIFY2(text.result().contains(QLatin1String("Agreement"), Qt::CaseInsensitive),
            qPrintable(text.result().left(200)));
    }
};

QTEST_MAIN(PdfPageRendererTest)
#include "pdf_page_renderer_test.moc"
