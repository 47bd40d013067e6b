#include "app/report/report_exporter.h"

#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QSaveFile>

namespace cw {

std::optional<ReportFormat> reportFormatFromName(const QString& name)
{
    const QString lowered = name.trimmed().toLower();
    if (lowered == QLatin1String("json"))
        return ReportFormat::Json;
    if (lowered == QLatin1String("md") || lowered == QLatin1String("markdown"))
        return ReportFormat::Markdown;
    if (lowered == QLatin1String("html") || lowered == QLatin1String("htm"))
        return ReportFormat::Html;
    if (lowered == QLatin1String("pdf"))
        return ReportFormat::Pdf;
    if (lowered == QLatin1String("csv"))
        return ReportFormat::Csv;
    return std::nullopt;
}

QString reportFormatName(ReportFormat format)
{
    switch (format) {
    case ReportFormat::Json:
        return QStringLiteral("json");
    case ReportFormat::Markdown:
        return QStringLiteral("md");
    case ReportFormat::Html:
        return QStringLiteral("html");
    case ReportFormat::Pdf:
        return QStringLiteral("pdf");
    case ReportFormat::Csv:
        break;
    }
    return QStringLiteral("csv");
}

QString reportFormatSuffix(ReportFormat format)
{
    return reportFormatName(format);
}

Result<QByteArray> renderReport(const Review& review, ReportFormat format)
{
    switch (format) {
    case ReportFormat::Json:
        return reviewToJson(review);
    case ReportFormat::Markdown:
        return reviewToMarkdown(review);
    case ReportFormat::Html:
        return reviewToHtml(review);
    case ReportFormat::Pdf:
        return reviewToPdf(review);
    case ReportFormat::Csv:
        break;
    }
    return reviewFindingsToCsv(review);
}

Result<void> writeFileAtomically(const QString& path, const QByteArray& bytes)
{
    const std::string name = path.toStdString();
    if (path.isEmpty())
        return makeError("report: no output path given");
    const QFileInfo info(path);
    // Never replace a device, pipe or folder: QSaveFile would rename a regular file over it.
    if (info.exists() && !info.isFile())
        return makeError(name + ": not a regular file; choose a file path for the report");
    if (!info.dir().exists())
        return makeError(
            name + ": folder " + info.absolutePath().toStdString() + " does not exist");
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return makeError(name + ": cannot create file: " + file.errorString().toStdString());
    if (file.write(bytes) != bytes.size()) {
        const std::string reason = file.errorString().toStdString();
        file.cancelWriting();
        return makeError(name + ": write failed (disk full?): " + reason);
    }
    if (!file.commit()) // flushes; a full disk shows up here at the latest
        return makeError(
            name + ": could not complete the file: " + file.errorString().toStdString());
    return {};
}

Result<void> exportReview(const Review& review, ReportFormat format, const QString& path)
{
    Result<QByteArray> bytes = renderReport(review, format);
    if (!bytes)
        return bytes.error();
    return writeFileAtomically(path, bytes.value());
}

} // namespace cw
