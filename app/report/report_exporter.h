#pragma once

#include "app/review/review_types.h"
#include "engine/common/result.h"

#include <QByteArray>
#include <QString>
#include <optional>

namespace cw {

// The report formats a review can be exported to.
enum class ReportFormat { Json, Markdown, Html, Pdf, Csv };

// "json", "md" (or "markdown"), "html" (or "htm"), "pdf", "csv"; case-insensitive.
std::optional<ReportFormat> reportFormatFromName(const QString& name);
// The canonical name: "json", "md", "html", "pdf", "csv".
QString reportFormatName(ReportFormat format);
// The usual file suffix, without the dot (same as the canonical name).
QString reportFormatSuffix(ReportFormat format);

// Writes `review` to `path` in `format`. The file is written to a temporary file beside
// `path` and renamed into place only when complete, so a failure (unwritable folder, full
// disk) leaves no half-written report behind; the error names the path and the cause.
// PDF needs a QGuiApplication (fonts); the other formats need only QCoreApplication or none.
Result<void> exportReview(const Review& review, ReportFormat format, const QString& path);

// The report's bytes without touching the disk. renderReport(.., Pdf) needs a QGuiApplication.
Result<QByteArray> renderReport(const Review& review, ReportFormat format);

// The full review as JSON (UTF-8, indented), following resources/schemas/review.schema.json.
// Offsets are Unicode code points into document.text.
QByteArray reviewToJson(const Review& review);
// The inverse of reviewToJson for files this program wrote; the error names the field.
Result<Review> reviewFromJson(const QByteArray& json);

// Each format on its own (used by exportReview; public for tests and the GUI preview).
QByteArray reviewToMarkdown(const Review& review);
QByteArray reviewToHtml(const Review& review);
QByteArray reviewFindingsToCsv(const Review& review);
Result<QByteArray> reviewToPdf(const Review& review);

// Writes bytes to path atomically (temp file + rename); the error names the path.
Result<void> writeFileAtomically(const QString& path, const QByteArray& bytes);

} // namespace cw
