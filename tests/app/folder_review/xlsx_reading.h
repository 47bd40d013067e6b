#pragma once

// Reads the cells of an XLSX written by the folder review back, without a spreadsheet: the
// workbook's sheet names, and each sheet's cells by reference ("A1") through the shared
// strings. Enough to check the table's structure in the fast suite.
#include "app/redline/docx_package.h"
#include "app/redline/xml_tree.h"

#include <QMap>
#include <QStringList>

namespace cw::testing {

struct XlsxSheet {
    QString name;
    QMap<QString, QString> cells; // "B3" -> its text or number as written
};

inline void cellsOf(const redline::XmlNode& node, const QStringList& shared, XlsxSheet& sheet)
{
    if (node.isElement(u"c")) {
        const redline::XmlNode* v = node.child(u"v");
        const redline::XmlNode* is = node.child(u"is");
        QString value = v ? v->allText() : (is ? is->allText() : QString());
        if (node.attribute("t") == QLatin1String("s"))
            value = shared.value(value.toInt());
        sheet.cells.insert(node.attribute("r"), value);
        return;
    }
    for (const redline::XmlNode& c : node.children)
        cellsOf(c, shared, sheet);
}

inline QList<XlsxSheet> readXlsx(const QString& path)
{
    QList<XlsxSheet> sheets;
    auto package = redline::DocxPackage::read(path);
    if (!package)
        return sheets;
    QStringList shared;
    if (auto strings = redline::parseXml(package->part("xl/sharedStrings.xml"), "sharedStrings")) {
        for (const redline::XmlNode& si : strings->root.children) {
            if (si.isElement(u"si"))
                shared.append(si.allText());
        }
    }
    auto workbook = redline::parseXml(package->part("xl/workbook.xml"), "workbook");
    if (!workbook)
        return sheets;
    int number = 0;
    std::function<void(const redline::XmlNode&)> visit = [&](const redline::XmlNode& n) {
        if (n.isElement(u"sheet")) {
            XlsxSheet sheet;
            sheet.name = n.attribute("name");
            ++number;
            const QString part = QStringLiteral("xl/worksheets/sheet%1.xml").arg(number);
            if (auto xml = redline::parseXml(package->part(part), part))
                cellsOf(xml->root, shared, sheet);
            sheets.append(sheet);
            return;
        }
        for (const redline::XmlNode& c : n.children)
            visit(c);
    };
    visit(workbook->root);
    return sheets;
}

// "A", "B", ... "AA" for a 0-based column.
inline QString columnName(int column)
{
    QString name;
    for (int c = column + 1; c > 0; c = (c - 1) / 26)
        name.prepend(QChar('A' + (c - 1) % 26));
    return name;
}

} // namespace cw::testing
