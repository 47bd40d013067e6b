#pragma once

// Reads a redlined document.xml the way Word's "Accept all" and "Reject all" would leave it:
// the text of each body paragraph, in order.
#include "app/redline/xml_tree.h"

#include <QStringList>
#include <functional>

namespace cw::redline::testing {

enum class Resolve { AcceptAll, RejectAll };

inline void collect(const XmlNode& node, Resolve how, QString& out)
{
    if (node.kind == XmlNode::Kind::Text) {
        out += node.text;
        return;
    }
    if (node.kind != XmlNode::Kind::Element)
        return;
    const QStringView local = node.localName();
    if (local == QLatin1String("pPr") || local == QLatin1String("rPr")
        || local == QLatin1String("instrText"))
        return;
    if (how == Resolve::AcceptAll
        && (local == QLatin1String("del") || local == QLatin1String("delText")))
        return;
    if (how == Resolve::RejectAll && local == QLatin1String("ins"))
        return;
    if (local == QLatin1String("tab")) {
        out += QLatin1Char('\t');
        return;
    }
    if (local == QLatin1String("br")) {
        out += QLatin1Char('\n');
        return;
    }
    if (local != QLatin1String("t") && local != QLatin1String("delText")) {
        for (const XmlNode& c : node.children)
            collect(c, how, out);
        return;
    }
    for (const XmlNode& c : node.children)
        collect(c, how, out);
}

inline bool markDeleted(const XmlNode& p)
{
    const XmlNode* pPr = p.child(u"w:pPr");
    const XmlNode* rPr = pPr ? pPr->child(u"w:rPr") : nullptr;
    return rPr && rPr->child(u"w:del");
}

// Body paragraphs (tables' paragraphs included), merged where accepting deletes their mark.
inline QStringList paragraphs(const XmlDocument& document, Resolve how)
{
    QStringList out;
    bool joinNext = false;
    std::function<void(const XmlNode&)> visit = [&](const XmlNode& node) {
        if (node.isElement(u"w:p")) {
            QString text;
            collect(node, how, text);
            if (joinNext && !out.isEmpty())
                out.back() += text;
            else
                out.append(text);
            joinNext = how == Resolve::AcceptAll && markDeleted(node);
            return;
        }
        for (const XmlNode& c : node.children)
            visit(c);
    };
    visit(document.root);
    return out;
}

inline int countElements(const XmlNode& node, QStringView name)
{
    int n = node.isElement(name) ? 1 : 0;
    for (const XmlNode& c : node.children)
        n += countElements(c, name);
    return n;
}

inline void findElements(const XmlNode& node, QStringView name, QList<const XmlNode*>& out)
{
    if (node.isElement(name))
        out.append(&node);
    for (const XmlNode& c : node.children)
        findElements(c, name, out);
}

} // namespace cw::redline::testing
