#include "app/ingest/poppler_threads.h"

#include <QByteArray>
#include <QImage>
#include <QList>
#include <memory>
#include <mutex>
#include <poppler-qt6.h>

namespace cw {

namespace {

// A valid one-page PDF (1 x 1 pt, one filled rectangle) with a correct cross-reference
// table, so that Poppler renders it without a repair pass.
QByteArray onePointPdf()
{
    const QList<QByteArray> objects {
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 1 1] /Contents 4 0 R >>",
        "<< /Length 16 >>\nstream\n0 g 0 0 1 1 re f\nendstream",
    };
    QByteArray pdf = "%PDF-1.4\n";
    QList<qsizetype> offsets;
    for (qsizetype i = 0; i < objects.size(); ++i) {
        offsets.append(pdf.size());
        pdf += QByteArray::number(i + 1) + " 0 obj\n" + objects[i] + "\nendobj\n";
    }
    const qsizetype xref = pdf.size();
    pdf += "xref\n0 " + QByteArray::number(objects.size() + 1) + "\n0000000000 65535 f \n";
    for (qsizetype offset : offsets)
        pdf += QByteArray::number(offset).rightJustified(10, '0') + " 00000 n \n";
    pdf += "trailer\n<< /Size " + QByteArray::number(objects.size() + 1)
        + " /Root 1 0 R >>\nstartxref\n" + QByteArray::number(xref) + "\n%%EOF\n";
    return pdf;
}

} // namespace

void preparePopplerForThreads()
{
    static std::once_flag once;
    std::call_once(once, [] {
        std::unique_ptr<Poppler::Document> document = Poppler::Document::loadFromData(onePointPdf());
        if (!document)
            return;
        if (std::unique_ptr<Poppler::Page> page = document->page(0))
            (void)page->renderToImage(72.0, 72.0); // only the side effect matters
    });
}

} // namespace cw
