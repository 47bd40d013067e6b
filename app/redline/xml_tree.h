#pragma once

#include "engine/common/result.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>
#include <vector>

namespace cw::redline {

// A small XML tree that writes back what it read: names and attributes exactly as written
// (prefixes and xmlns declarations included, no namespace processing), every text node
// (whitespace-only ones too: a run of one space in Word is <w:t xml:space="preserve"> </w:t>),
// comments and processing instructions. QDomDocument in Qt 6.4 drops whitespace-only text, so
// a DOCX edited through it would lose spaces; this tree is what the redline edits in place.
struct XmlNode {
    enum class Kind { Element, Text, Raw }; // Raw: a comment or processing instruction, as is
    Kind kind = Kind::Element;
    QString name; // qualified name as written ("w:p"); Text: empty
    QList<QPair<QString, QString>> attributes; // in order, xmlns ones included
    QString text; // Text: the characters (unescaped); Raw: the markup
    std::vector<XmlNode> children;

    static XmlNode element(const QString& name, QList<QPair<QString, QString>> attributes = {});
    static XmlNode textNode(const QString& text);

    bool isElement(QStringView qualifiedName) const
    {
        return kind == Kind::Element && name == qualifiedName;
    }
    QStringView localName() const;
    QString attribute(const QString& qualifiedName) const;
    void setAttribute(const QString& qualifiedName, const QString& value);
    // The first child element named so, or null.
    XmlNode* child(QStringView qualifiedName);
    const XmlNode* child(QStringView qualifiedName) const;
    // All the text below this node, in order.
    QString allText() const;
};

struct XmlDocument {
    QString declaration; // "<?xml ... ?>" as written, or empty
    std::vector<XmlNode> prolog; // comments and processing instructions before the root
    XmlNode root;
};

// Parses a part of an Office package; the error names `part`, the line and the column. A DTD
// or an entity other than the five predefined ones is refused (no Office part has them).
Result<XmlDocument> parseXml(const QByteArray& bytes, const QString& part);
QByteArray writeXml(const XmlDocument& document);

} // namespace cw::redline
