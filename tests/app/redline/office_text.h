#pragma once

// What LibreOffice made of a redline: the flat ODF text (soffice --convert-to fodt) read with
// its own tracked changes resolved both ways. In ODF the body holds the text with insertions
// in it (between text:change-start and text:change-end) and deletions taken out (a text:change
// point, the deleted text kept in text:tracked-changes), so "accept all" is the body as it is
// and "reject all" is the body without the insertions, with the deletions put back.
#include "app/redline/xml_tree.h"

#include <QHash>
#include <QSet>
#include <QStringList>
#include <functional>

namespace cw::redline::testing {

struct OfficeText {
    QStringList accepted; // paragraphs, whitespace simplified, empty ones left out
    QStringList rejected;
    int insertions = 0;
    int deletions = 0;
    QStringList commentAuthors;
    QStringList commentTexts;
};

inline OfficeText readOfficeText(const XmlDocument& fodt)
{
    constexpr QChar kBreak(0x2029); // a paragraph break inside deleted text
    OfficeText out;
    QHash<QString, QString> deleted; // change id -> deleted text
    QSet<QString> inserted; // change ids of insertions
    std::function<QString(const XmlNode&, bool)> textOf = [&](const XmlNode& n, bool rejecting) {
        if (n.kind == XmlNode::Kind::Text)
            return n.text;
        if (n.kind != XmlNode::Kind::Element || n.name == u"office:annotation"
            || n.name == u"office:change-info" || n.name == u"text:tracked-changes")
            return QString();
        if (n.name == u"text:s")
            return QString(qMax(1, n.attribute("text:c").toInt()), QLatin1Char(' '));
        if (n.name == u"text:tab")
            return QStringLiteral("\t");
        if (n.name == u"text:line-break")
            return QStringLiteral("\n");
        QString s;
        for (const XmlNode& c : n.children)
            s += textOf(c, rejecting);
        if ((n.name == u"text:p" || n.name == u"text:h") && rejecting)
            s += kBreak;
        return s;
    };
    std::function<void(const XmlNode&)> regions = [&](const XmlNode& n) {
        if (n.name == u"text:changed-region") {
            const QString id
                = n.attribute("text:id").isEmpty() ? n.attribute("xml:id") : n.attribute("text:id");
            if (n.child(u"text:insertion")) {
                inserted.insert(id);
                ++out.insertions;
            }
            if (const XmlNode* d = n.child(u"text:deletion")) {
                QString text = textOf(*d, true);
                if (text.endsWith(kBreak))
                    text.chop(1);
                deleted.insert(id, text);
                ++out.deletions;
            }
            return;
        }
        if (n.name == u"office:annotation") {
            const XmlNode* creator = n.child(u"dc:creator");
            out.commentAuthors.append(creator ? creator->allText() : QString());
            QString text;
            for (const XmlNode& c : n.children) {
                if (c.name == u"text:p")
                    text += textOf(c, false) + QLatin1Char(' ');
            }
            out.commentTexts.append(text.simplified());
            return;
        }
        for (const XmlNode& c : n.children)
            regions(c);
    };
    regions(fodt.root);
    // The body's paragraphs, both ways. LibreOffice keeps deleted text in the body too, between
    // text:change-start and text:change-end like an insertion (older files: a text:change point
    // with the text in the region). A paragraph break inside a deletion goes when accepting,
    // one inside an insertion when rejecting.
    QString accepting, rejecting;
    QSet<QString> inDeletion, inInsertion;
    auto add = [&](const QString& piece) {
        if (inDeletion.isEmpty())
            accepting += piece;
        if (inInsertion.isEmpty())
            rejecting += piece;
    };
    std::function<void(const XmlNode&)> body = [&](const XmlNode& n) {
        if (n.kind == XmlNode::Kind::Text) {
            add(n.text);
            return;
        }
        if (n.kind != XmlNode::Kind::Element || n.name == u"office:annotation"
            || n.name == u"text:tracked-changes")
            return;
        const QString id = n.attribute("text:change-id");
        if (n.name == u"text:change-start") {
            (inserted.contains(id) ? inInsertion : inDeletion).insert(id);
            return;
        }
        if (n.name == u"text:change-end") {
            inInsertion.remove(id);
            inDeletion.remove(id);
            return;
        }
        if (n.name == u"text:change") {
            rejecting += deleted.value(id);
            return;
        }
        if (n.name == u"text:s" || n.name == u"text:tab" || n.name == u"text:line-break") {
            add(textOf(n, false));
            return;
        }
        for (const XmlNode& c : n.children)
            body(c);
        if (n.name == u"text:p" || n.name == u"text:h")
            add(QString(kBreak));
    };
    std::function<const XmlNode*(const XmlNode&)> find = [&](const XmlNode& n) -> const XmlNode* {
        if (n.name == u"office:body")
            return &n;
        for (const XmlNode& c : n.children) {
            if (const XmlNode* found = find(c))
                return found;
        }
        return nullptr;
    };
    if (const XmlNode* text = find(fodt.root))
        body(*text);
    for (const QString& p : accepting.split(kBreak)) {
        if (!p.simplified().isEmpty())
            out.accepted.append(p.simplified());
    }
    for (const QString& p : rejecting.split(kBreak)) {
        if (!p.simplified().isEmpty())
            out.rejected.append(p.simplified());
    }
    return out;
}

inline QStringList simplifiedParagraphs(const QStringList& paragraphs)
{
    QStringList out;
    for (const QString& p : paragraphs) {
        if (!p.simplified().isEmpty())
            out.append(p.simplified());
    }
    return out;
}

} // namespace cw::redline::testing
