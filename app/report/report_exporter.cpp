#include "app/report/report_exporter.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

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

namespace {

// The process's file-creation mask, read without changing it: umask(2) can only be read by
// setting it, and setting it is process-wide, so a thread creating a file meanwhile would get
// the wrong mode. Linux reports it in /proc/self/status (since 4.7); where it cannot be read
// the report is private to its owner.
std::optional<mode_t> currentUmask()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return std::nullopt;
    for (const QByteArray& line : status.readAll().split('\n')) {
        if (line.startsWith("Umask:")) {
            bool ok = false;
            const uint mask = line.mid(6).trimmed().toUInt(&ok, 8);
            if (ok && mask <= 0777)
                return mode_t(mask);
        }
    }
    return std::nullopt;
}

mode_t reportFileMode(const QString& path)
{
    // A report written over an existing file keeps that file's permissions.
    struct stat existing { };
    if (::stat(QFile::encodeName(path).constData(), &existing) == 0 && S_ISREG(existing.st_mode))
        return existing.st_mode & 0777;
    const std::optional<mode_t> mask = currentUmask();
    return mask ? (0666 & ~*mask) : 0600;
}

} // namespace

Result<void> writeFileAtomically(const QString& path, const QByteArray& bytes)
{
    // By hand rather than QSaveFile: Qt 6.4's QSaveFile commits a truncated file when a write
    // fails with EFBIG/ENOSPC during its final flush (seen in report_exporter_test).
    const std::string name = path.toStdString();
    if (path.isEmpty())
        return makeError("report: no output path given");
    const QFileInfo info(path);
    // Never replace a device, pipe or folder with a regular file.
    if (info.exists() && !info.isFile())
        return makeError(name + ": not a regular file; choose a file path for the report");
    if (!info.dir().exists())
        return makeError(
            name + ": folder " + info.absolutePath().toStdString() + " does not exist");
    QByteArray temp = QFile::encodeName(path) + ".XXXXXX.part";
    const int fd = ::mkstemps(temp.data(), 5);
    if (fd < 0)
        return makeError(name + ": cannot create file: " + std::strerror(errno));
    const auto fail = [&](const char* what) {
        const std::string reason = std::strerror(errno);
        ::close(fd);
        ::unlink(temp.constData());
        return makeError(name + ": " + what + ": " + reason);
    };
    if (::fchmod(fd, reportFileMode(path)) != 0)
        return fail("cannot set permissions");
    qsizetype done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.constData() + done, size_t(bytes.size() - done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return fail("write failed (disk full?)");
        done += n;
    }
    if (::fsync(fd) != 0)
        return fail("could not flush the file to disk");
    if (::close(fd) != 0) {
        const std::string reason = std::strerror(errno);
        ::unlink(temp.constData());
        return makeError(name + ": could not complete the file: " + reason);
    }
    if (::rename(temp.constData(), QFile::encodeName(path).constData()) != 0) {
        const std::string reason = std::strerror(errno);
        ::unlink(temp.constData());
        return makeError(name + ": cannot move the finished file into place: " + reason);
    }
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
