#include "app/redline/xml_tree.h"

#include <QXmlStreamReader>

namespace cw::redline {

XmlNode XmlNode::element(const QString& name, QList<QPair<QString, QString>> attributes)
{
    XmlNode node;
    node.name = name;
    node.attributes = std::move(attributes);
    return node;
}

XmlNode XmlNode::textNode(const QString& text)
{
    XmlNode node;
    node.kind = Kind::Text;
    node.text = text;
    return node;
}

QStringView XmlNode::localName() const
{
    const qsizetype colon = name.indexOf(QLatin1Char(':'));
    return QStringView(name).mid(colon + 1);
}

QString XmlNode::attribute(const QString& qualifiedName) const
{
    for (const auto& [key, value] : attributes) {
        if (key == qualifiedName)
            return value;
    }
    return {};
}

void XmlNode::setAttribute(const QString& qualifiedName, const QString& value)
{
    for (auto& [key, old] : attributes) {
        if (key == qualifiedName) {
            old = value;
            return;
        }
    }
    attributes.append({ qualifiedName, value });
}

XmlNode* XmlNode::child(QStringView qualifiedName)
{
    for (XmlNode& c : children) {
        if (c.isElement(qualifiedName))
            return &c;
    }
    return nullptr;
}

const XmlNode* XmlNode::child(QStringView qualifiedName) const
{
    return const_cast<XmlNode*>(this)->child(qualifiedName);
}

QString XmlNode::allText() const
{
    if (kind == Kind::Text)
        return text;
    QString out;
    for (const XmlNode& c : children)
        out += c.allText();
    return out;
}

Result<XmlDocument> parseXml(const QByteArray& bytes, const QString& part)
{
    QXmlStreamReader xml(bytes);
    xml.setNamespaceProcessing(false);
    XmlDocument document;
    std::vector<XmlNode> open;
    bool haveRoot = false;
    auto fail = [&](const QString& why) {
        return makeError(QStringLiteral("%1 is malformed XML (line %2, column %3): %4")
                             .arg(part)
                             .arg(xml.lineNumber())
                             .arg(xml.columnNumber())
                             .arg(why)
                             .toStdString());
    };
    auto place = [&](XmlNode node) {
        if (!open.empty())
            open.back().children.push_back(std::move(node));
        else if (node.kind == XmlNode::Kind::Raw)
            document.prolog.push_back(std::move(node));
    };
    while (!xml.atEnd()) {
        switch (xml.readNext()) {
        case QXmlStreamReader::StartDocument: {
            QString declaration
                = QStringLiteral("<?xml version=\"%1\"")
                      .arg(xml.documentVersion().isEmpty() ? QStringLiteral("1.0")
                                                           : xml.documentVersion().toString());
            declaration += QStringLiteral(" encoding=\"UTF-8\"");
            if (xml.isStandaloneDocument())
                declaration += QStringLiteral(" standalone=\"yes\"");
            document.declaration = declaration + QStringLiteral("?>");
            break;
        }
        case QXmlStreamReader::DTD:
            return fail(QStringLiteral("declares a DTD, which Office parts never do"));
        case QXmlStreamReader::EntityReference:
            return fail(QStringLiteral("uses the undeclared entity &%1;").arg(xml.name()));
        case QXmlStreamReader::StartElement: {
            if (open.empty() && haveRoot)
                return fail(QStringLiteral("has a second root element"));
            XmlNode node = XmlNode::element(xml.qualifiedName().toString());
            for (const QXmlStreamAttribute& a : xml.attributes())
                node.attributes.append({ a.qualifiedName().toString(), a.value().toString() });
            open.push_back(std::move(node));
            break;
        }
        case QXmlStreamReader::EndElement: {
            XmlNode node = std::move(open.back());
            open.pop_back();
            if (open.empty()) {
                document.root = std::move(node);
                haveRoot = true;
            } else {
                open.back().children.push_back(std::move(node));
            }
            break;
        }
        case QXmlStreamReader::Characters:
            if (!open.empty())
                place(XmlNode::textNode(xml.text().toString()));
            break;
        case QXmlStreamReader::Comment: {
            XmlNode raw;
            raw.kind = XmlNode::Kind::Raw;
            raw.text = QStringLiteral("<!--") + xml.text().toString() + QStringLiteral("-->");
            place(std::move(raw));
            break;
        }
        case QXmlStreamReader::ProcessingInstruction: {
            XmlNode raw;
            raw.kind = XmlNode::Kind::Raw;
            raw.text = QStringLiteral("<?") + xml.processingInstructionTarget().toString()
                + (xml.processingInstructionData().isEmpty()
                        ? QString()
                        : QStringLiteral(" ") + xml.processingInstructionData().toString())
                + QStringLiteral("?>");
            place(std::move(raw));
            break;
        }
        default:
            break;
        }
    }
    if (xml.hasError())
        return fail(xml.errorString());
    if (!haveRoot)
        return fail(QStringLiteral("has no root element"));
    return document;
}

namespace {

void escape(QString& out, const QString& text, bool attribute)
{
    for (QChar c : text) {
        switch (c.unicode()) {
        case '&':
            out += QLatin1String("&amp;");
            break;
        case '<':
            out += QLatin1String("&lt;");
            break;
        case '>':
            out += QLatin1String("&gt;");
            break;
        case '"':
            out += attribute ? QLatin1String("&quot;") : QLatin1String("\"");
            break;
        case '\n':
            out += attribute ? QLatin1String("&#10;") : QLatin1String("\n");
            break;
        case '\r':
            out += QLatin1String("&#13;");
            break;
        case '\t':
            out += attribute ? QLatin1String("&#9;") : QLatin1String("\t");
            break;
        default:
            out += c;
        }
    }
}

void write(QString& out, const XmlNode& node)
{
    switch (node.kind) {
    case XmlNode::Kind::Text:
        escape(out, node.text, false);
        return;
    case XmlNode::Kind::Raw:
        out += node.text;
        return;
    case XmlNode::Kind::Element:
        break;
    }
    out += QLatin1Char('<') + node.name;
    for (const auto& [key, value] : node.attributes) {
        out += QLatin1Char(' ') + key + QLatin1String("=\"");
        escape(out, value, true);
        out += QLatin1Char('"');
    }
    if (node.children.empty()) {
        out += QLatin1String("/>");
        return;
    }
    out += QLatin1Char('>');
    for (const XmlNode& c : node.children)
        write(out, c);
    out += QLatin1String("</") + node.name + QLatin1Char('>');
}

} // namespace

QByteArray writeXml(const XmlDocument& document)
{
    QString out;
    if (!document.declaration.isEmpty())
        out += document.declaration + QLatin1String("\r\n");
    for (const XmlNode& node : document.prolog)
        write(out, node);
    write(out, document.root);
    return out.toUtf8();
}

} // namespace cw::redline
