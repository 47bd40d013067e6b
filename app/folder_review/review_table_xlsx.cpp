// The folder review's table as an Excel workbook. libxlsxwriter (Debian's libxlsxwriter-dev)
// writes it, in the clausewright-xlsx-writer process (app/xlsx_writer: QuaZip and
// libxlsxwriter's minizip cannot share one process); this file lays the sheets out as the JSON
// that process reads.
#include "app/folder_review/review_table.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

namespace cw {

namespace {

enum Format { Header = 0, Group = 1, Wrap = 2 };

QJsonArray formats()
{
    return { QJsonObject {
                 { "bold", true }, { "wrap", true }, { "top", true }, { "bottom_border", true } },
        QJsonObject {
            { "bold", true }, { "center", true }, { "border", true }, { "background", 0xDDE7F0 } },
        QJsonObject { { "wrap", true }, { "top", true } } };
}

struct SheetBuilder {
    QJsonArray cells;
    QJsonArray merges;
    QJsonArray columns;

    void text(int row, int col, const QString& value, int format = -1)
    {
        if (!value.isEmpty())
            cells.append(QJsonArray { row, col, value, format });
    }
    void number(int row, int col, double value, int format = -1)
    {
        cells.append(QJsonArray { row, col, value, format });
    }
    void merge(int r1, int c1, int r2, int c2, const QString& value, int format)
    {
        merges.append(QJsonArray { r1, c1, r2, c2, value, format });
    }
    void column(int first, int last, double width, int format = -1)
    {
        columns.append(QJsonArray { first, last, width, format });
    }
};

QJsonObject contractsSheet(const ReviewTable& table)
{
    SheetBuilder s;
    const QStringList fixed { "File", "Title", "Status", "Pages", "High", "Medium", "Low",
        "Missing (expected by the playbook)" };
    const int groupStart = int(fixed.size());
    for (int c = 0; c < fixed.size(); ++c)
        s.merge(0, c, 1, c, fixed[c], Header);
    s.column(0, 0, 40);
    s.column(1, 2, 30);
    s.column(7, 7, 30);
    for (int k = 0; k < table.categories.size(); ++k) {
        const int first = groupStart + 4 * k;
        s.merge(0, first, 0, first + 3, table.categories[k], Group);
        const char* parts[] = { "present", "excerpt", "risk", "page" };
        for (int p = 0; p < 4; ++p)
            s.text(1, first + p, QString::fromLatin1(parts[p]), Header);
        s.column(first + 1, first + 1, 48, Wrap);
    }
    int r = 2;
    for (const ContractRow& row : table.rows) {
        s.text(r, 0, row.file);
        s.text(r, 1, row.title);
        s.text(r, 2, row.status);
        s.number(r, 3, row.pages);
        s.number(r, 4, row.high);
        s.number(r, 5, row.medium);
        s.number(r, 6, row.low);
        s.text(r, 7, row.missing.join(QStringLiteral("; ")));
        for (int k = 0; k < row.cells.size(); ++k) {
            const CategoryCell& cell = row.cells[k];
            const int first = groupStart + 4 * k;
            s.text(r, first, cell.present ? QStringLiteral("yes") : QStringLiteral("no"));
            s.text(r, first + 1, cell.excerpt, Wrap);
            if (cell.present)
                s.text(r, first + 2, riskName(cell.risk));
            s.text(r, first + 3, cell.pages);
        }
        ++r;
    }
    QJsonObject sheet { { "name", "Contracts" }, { "cells", s.cells }, { "merges", s.merges },
        { "columns", s.columns }, { "freeze", QJsonArray { 2, 1 } } };
    if (!table.rows.isEmpty())
        sheet.insert("autofilter",
            QJsonArray { 1, 0, r - 1, groupStart + 4 * int(table.categories.size()) - 1 });
    return sheet;
}

QJsonObject summarySheet(const ReviewTable& table)
{
    SheetBuilder s;
    int r = 0;
    const QList<QPair<QString, int>> totals { { "Contracts", int(table.rows.size()) },
        { "Reviewed now", table.reviewed }, { "From the history", table.resumed },
        { "Could not be reviewed", table.failed }, { "High-risk findings", table.high },
        { "Medium-risk findings", table.medium }, { "Low-risk findings", table.low } };
    for (const auto& [label, value] : totals) {
        s.text(r, 0, label, Header);
        s.number(r, 1, value);
        ++r;
    }
    ++r;
    const QStringList columns { "Category", "Contracts with it", "High", "Medium", "Low",
        "Missing where expected" };
    for (int c = 0; c < columns.size(); ++c)
        s.text(r, c, columns[c], Header);
    ++r;
    for (const CategorySummary& c : table.summary) {
        s.text(r, 0, c.category);
        s.number(r, 1, c.contracts);
        s.number(r, 2, c.high);
        s.number(r, 3, c.medium);
        s.number(r, 4, c.low);
        s.number(r, 5, c.missing);
        ++r;
    }
    s.column(0, 0, 36);
    s.column(1, 5, 18);
    return { { "name", "Summary" }, { "cells", s.cells }, { "columns", s.columns } };
}

// Beside the running program (installed, or the build tree's app/), else the build tree's.
QString writerProgram()
{
    const QString given = qEnvironmentVariable("CW_XLSX_WRITER");
    if (!given.isEmpty())
        return given;
    if (QCoreApplication::instance()) {
        const QString beside
            = QDir(QCoreApplication::applicationDirPath()).filePath("clausewright-xlsx-writer");
        if (QFileInfo(beside).isExecutable())
            return beside;
    }
#ifdef CW_XLSX_WRITER_BUILD_PATH
    if (QFileInfo(QStringLiteral(CW_XLSX_WRITER_BUILD_PATH)).isExecutable())
        return QStringLiteral(CW_XLSX_WRITER_BUILD_PATH);
#endif
    return {};
}

} // namespace

Result<void> writeReviewTableXlsx(const ReviewTable& table, const QString& path)
{
    const std::string name = "'" + path.toStdString() + "'";
    const QString program = writerProgram();
    if (program.isEmpty())
        return makeError(name
            + ": clausewright-xlsx-writer, which writes XLSX files, is not "
              "installed beside this program; write a .csv instead");
    const QJsonObject workbook { { "formats", formats() },
        { "sheets", QJsonArray { contractsSheet(table), summarySheet(table) } } };
    // Written beside the target and renamed at the end, so a failed write leaves no half file.
    const QString partial = path + QStringLiteral(".part");
    QProcess writer;
    writer.start(program, { partial });
    if (!writer.waitForStarted(10000))
        return makeError(name + ": cannot run " + program.toStdString() + " ("
            + writer.errorString().toStdString() + ")");
    writer.write(QJsonDocument(workbook).toJson(QJsonDocument::Compact));
    writer.closeWriteChannel();
    if (!writer.waitForFinished(300000) || writer.exitStatus() != QProcess::NormalExit
        || writer.exitCode() != 0) {
        QFile::remove(partial);
        const QString why = QString::fromUtf8(writer.readAllStandardError()).trimmed();
        return makeError(name + ": cannot write the workbook ("
            + (why.isEmpty() ? writer.errorString() : why).toStdString() + ")");
    }
    QFile::remove(path);
    if (!QFile::rename(partial, path)) {
        QFile::remove(partial);
        return makeError(name + ": cannot write (renaming the finished workbook failed)");
    }
    return {};
}

} // namespace cw
