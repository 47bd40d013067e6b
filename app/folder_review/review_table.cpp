#include "app/folder_review/review_table.h"

#include "app/heads/cuad_dataset.h"

#include <QFileInfo>
#include <QSaveFile>
#include <algorithm>
#include <set>
#include <tuple>

namespace cw {

namespace {

constexpr qsizetype kExcerptChars = 600;

QString shortened(const QString& text)
{
    const QString simple = text.simplified();
    return simple.size() <= kExcerptChars ? simple : simple.left(kExcerptChars - 1) + QChar(0x2026);
}

} // namespace

ReviewTable buildReviewTable(const QList<ContractResult>& results)
{
    ReviewTable table;
    table.categories = heads::cuadCategories();
    for (const QString& c : table.categories) {
        CategorySummary sum;
        sum.category = c;
        table.summary.append(sum);
    }
    for (const ContractResult& result : results) {
        ContractRow row;
        row.file = result.relativePath;
        row.cells.resize(table.categories.size());
        if (!result.review) {
            row.status = result.error.isEmpty() ? QStringLiteral("not reviewed") : result.error;
            ++table.failed;
            table.rows.append(row);
            continue;
        }
        const Review& review = *result.review;
        row.status
            = result.resumed ? QStringLiteral("from the history") : QStringLiteral("reviewed");
        if (!result.error.isEmpty())
            row.status += QStringLiteral(" (%1)").arg(result.error);
        (result.resumed ? table.resumed : table.reviewed) += 1;
        row.title = review.document.title;
        row.pages = review.document.pageCount();
        row.missing = review.summary.missingCategories;
        std::vector<std::set<int>> pages(size_t(table.categories.size()));
        std::vector<const Finding*> lead(size_t(table.categories.size()), nullptr);
        for (const Finding& f : review.findings) {
            const qsizetype c = table.categories.indexOf(f.category);
            if (c < 0)
                continue;
            CategoryCell& cell = row.cells[c];
            CategorySummary& sum = table.summary[c];
            if (!cell.present)
                ++sum.contracts;
            cell.present = true;
            cell.risk = std::max(cell.risk, f.risk);
            if (f.page > 0)
                pages[size_t(c)].insert(f.page);
            if (!lead[size_t(c)]
                || std::tuple(int(f.risk), f.score)
                    > std::tuple(int(lead[size_t(c)]->risk), lead[size_t(c)]->score))
                lead[size_t(c)] = &f;
            row.high += f.risk == Risk::High;
            row.medium += f.risk == Risk::Medium;
            row.low += f.risk == Risk::Low;
            sum.high += f.risk == Risk::High;
            sum.medium += f.risk == Risk::Medium;
            sum.low += f.risk == Risk::Low;
        }
        for (qsizetype c = 0; c < table.categories.size(); ++c) {
            if (lead[size_t(c)])
                row.cells[c].excerpt = shortened(lead[size_t(c)]->text);
            QStringList list;
            for (int p : pages[size_t(c)])
                list.append(QString::number(p));
            row.cells[c].pages = list.join(QStringLiteral(", "));
        }
        for (const QString& m : row.missing) {
            const qsizetype c = table.categories.indexOf(m);
            if (c >= 0)
                ++table.summary[c].missing;
        }
        table.high += row.high;
        table.medium += row.medium;
        table.low += row.low;
        table.rows.append(row);
    }
    return table;
}

QStringList reviewTableHeaders(const ReviewTable& table)
{
    QStringList headers { "File", "Title", "Status", "Pages", "High", "Medium", "Low",
        "Missing (expected by the playbook)" };
    for (const QString& c : table.categories) {
        for (const char* part : { "present", "excerpt", "risk", "page" })
            headers.append(c + QStringLiteral(": ") + QLatin1String(part));
    }
    return headers;
}

QStringList reviewTableCells(const ContractRow& row)
{
    QStringList cells { row.file, row.title, row.status, QString::number(row.pages),
        QString::number(row.high), QString::number(row.medium), QString::number(row.low),
        row.missing.join(QStringLiteral("; ")) };
    for (const CategoryCell& cell : row.cells) {
        cells.append(cell.present ? QStringLiteral("yes") : QStringLiteral("no"));
        cells.append(cell.excerpt);
        cells.append(cell.present ? riskName(cell.risk) : QString());
        cells.append(cell.pages);
    }
    return cells;
}

namespace {

QString csvField(const QString& value)
{
    // Cells starting like a formula are quoted with a leading apostrophe, so a spreadsheet
    // opening the CSV does not run a contract's text as a formula.
    QString v = value;
    if (!v.isEmpty() && QStringLiteral("=+-@").contains(v.front()))
        v.prepend(QLatin1Char('\''));
    if (v.contains(QLatin1Char('"')) || v.contains(QLatin1Char(','))
        || v.contains(QLatin1Char('\n')) || v.contains(QLatin1Char('\r')))
        return QLatin1Char('"') + v.replace(QLatin1String("\""), QLatin1String("\"\""))
            + QLatin1Char('"');
    return v;
}

QByteArray csvLine(const QStringList& fields)
{
    QStringList quoted;
    for (const QString& f : fields)
        quoted.append(csvField(f));
    return quoted.join(QLatin1Char(',')).toUtf8() + "\r\n";
}

} // namespace

Result<void> writeReviewTableCsv(const ReviewTable& table, const QString& path)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return makeError("'" + path.toStdString() + "': cannot write ("
            + file.errorString().toStdString() + ")");
    file.write(csvLine(reviewTableHeaders(table)));
    for (const ContractRow& row : table.rows)
        file.write(csvLine(reviewTableCells(row)));
    if (!file.commit())
        return makeError("'" + path.toStdString() + "': cannot write ("
            + file.errorString().toStdString() + ")");
    return {};
}

Result<void> writeReviewTable(const ReviewTable& table, const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("xlsx"))
        return writeReviewTableXlsx(table, path);
    if (suffix == QLatin1String("csv"))
        return writeReviewTableCsv(table, path);
    return makeError("'" + path.toStdString() + "': the table must be a .xlsx or a .csv file");
}

} // namespace cw
