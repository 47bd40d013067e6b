#include "app/redline/tracked_changes.h"

#include <QHash>
#include <algorithm>
#include <set>

namespace cw::redline {

namespace {

// The elements DOCX ingest (app/ingest/docx_reader.cpp, BodyParser) skips with their content:
// the text offsets below count characters exactly as it does.
bool skippedByReader(QStringView local)
{
    return local == QLatin1String("Fallback") || local == QLatin1String("del")
        || local == QLatin1String("instrText") || local == QLatin1String("delText")
        || local == QLatin1String("sectPr") || local == QLatin1String("footnoteReference");
}

// Run-level characters the reader adds for an element other than w:t.
QChar characterOf(QStringView local)
{
    if (local == QLatin1String("tab"))
        return QLatin1Char('\t');
    if (local == QLatin1String("br") || local == QLatin1String("cr"))
        return QLatin1Char('\n');
    if (local == QLatin1String("noBreakHyphen"))
        return QLatin1Char('-');
    return {};
}

// Characters the reader takes from `node` (inside a paragraph that has no nested one).
qsizetype lengthOf(const XmlNode& node)
{
    if (node.kind != XmlNode::Kind::Element)
        return 0;
    const QStringView local = node.localName();
    if (skippedByReader(local) || local == QLatin1String("pPr") || local == QLatin1String("rPr"))
        return 0;
    if (local == QLatin1String("t"))
        return node.allText().size();
    if (!characterOf(local).isNull())
        return 1;
    qsizetype n = 0;
    for (const XmlNode& c : node.children)
        n += lengthOf(c);
    return n;
}

struct Names {
    QString prefix;
    QString w(const char* local) const
    {
        return prefix.isEmpty() ? QString::fromLatin1(local)
                                : prefix + QLatin1Char(':') + QLatin1String(local);
    }
};

// Where runs may be split: w:r directly in the paragraph or inside these. Anything else (an
// existing w:ins or move, an equation, a content part) keeps its runs whole.
bool splittableContainer(const XmlNode& node, const Names& n)
{
    static const char* const kNames[]
        = { "hyperlink", "smartTag", "sdt", "sdtContent", "fldSimple", "customXml", "bdo", "dir" };
    for (const char* name : kNames) {
        if (node.name == n.w(name))
            return true;
    }
    return false;
}

struct WalkedParagraph {
    XmlNode* node = nullptr;
    QString raw; // the paragraph's text as the reader assembles it, before trimming
    QList<bool> locked; // per character of raw: in runs the redline does not split
    bool editable = true; // a body paragraph, not in a table, without nested paragraphs
    bool inTable = false; // its text is part of a table row's line, not a line of its own
    bool sectionBreak = false; // its properties end a section
};

struct Walk {
    Names names;
    std::vector<WalkedParagraph> open;
    std::vector<WalkedParagraph> done; // in the order the reader finishes them
};

void walk(XmlNode& node, Walk& w, int tableDepth, bool locked)
{
    if (node.kind != XmlNode::Kind::Element)
        return;
    const QStringView local = node.localName();
    if (skippedByReader(local))
        return;
    if (local == QLatin1String("p")) {
        WalkedParagraph p;
        p.node = &node;
        p.editable = tableDepth == 0 && w.open.empty() && node.name == w.names.w("p");
        p.inTable = tableDepth > 0;
        w.open.push_back(std::move(p));
        for (XmlNode& c : node.children)
            walk(c, w, tableDepth, false);
        WalkedParagraph finished = std::move(w.open.back());
        w.open.pop_back();
        if (!w.open.empty())
            w.open.back().editable = false;
        w.done.push_back(std::move(finished));
        return;
    }
    if (local == QLatin1String("pPr")) {
        if (!w.open.empty() && node.child(w.names.w("sectPr")))
            w.open.back().sectionBreak = true;
        return;
    }
    if (local == QLatin1String("rPr"))
        return;
    if (local == QLatin1String("t") || !characterOf(local).isNull()) {
        if (w.open.empty())
            return;
        const QString text
            = local == QLatin1String("t") ? node.allText() : QString(characterOf(local));
        w.open.back().raw += text;
        for (qsizetype i = 0; i < text.size(); ++i)
            w.open.back().locked.append(locked);
        return;
    }
    const bool run = local == QLatin1String("r");
    const bool childLocked = locked
        || (run ? node.name != w.names.w("r")
                : !w.open.empty() && !splittableContainer(node, w.names));
    const int depth = tableDepth + (local == QLatin1String("tbl") ? 1 : 0);
    for (XmlNode& c : node.children)
        walk(c, w, depth, childLocked);
}

// One edit's part in one paragraph, in the paragraph's raw character positions.
struct LocalOp {
    qsizetype a = 0;
    qsizetype b = 0;
    bool deletes = false;
    bool first = false; // the comment starts here
    bool last = false; // the comment ends (and the replacement goes) here
    QString insert;
    int commentId = 0;
    bool startWritten = false;
    bool endWritten = false;
};

struct Rebuild {
    Names names;
    const RevisionAuthor& author;
    int& nextId;
    std::vector<LocalOp>& ops;
    qsizetype pos = 0;
    int changes = 0;

    QList<QPair<QString, QString>> revision()
    {
        return { { names.w("id"), QString::number(nextId++) }, { names.w("author"), author.name },
            { names.w("date"), author.date } };
    }

    XmlNode marker(const char* name, int id)
    {
        return XmlNode::element(names.w(name), { { names.w("id"), QString::number(id) } });
    }

    XmlNode textElement(const QString& text)
    {
        XmlNode t = XmlNode::element(names.w("t"), { { "xml:space", "preserve" } });
        t.children.push_back(XmlNode::textNode(text));
        return t;
    }

    void markDeleted(XmlNode& node)
    {
        if (node.kind != XmlNode::Kind::Element)
            return;
        if (node.name == names.w("t"))
            node.name = names.w("delText");
        else if (node.name == names.w("instrText"))
            node.name = names.w("delInstrText");
        for (XmlNode& c : node.children)
            markDeleted(c);
    }

    XmlNode insertedRun(const QString& text, const XmlNode* rPr)
    {
        XmlNode ins = XmlNode::element(names.w("ins"), revision());
        XmlNode run = XmlNode::element(names.w("r"));
        if (rPr)
            run.children.push_back(*rPr);
        const QStringList lines = text.split(QLatin1Char('\n'));
        for (qsizetype i = 0; i < lines.size(); ++i) {
            if (i > 0)
                run.children.push_back(XmlNode::element(names.w("br")));
            if (!lines[i].isEmpty())
                run.children.push_back(textElement(lines[i]));
        }
        ins.children.push_back(std::move(run));
        return ins;
    }

    void splitRun(XmlNode run, std::vector<XmlNode>& out)
    {
        const qsizetype start = pos;
        std::vector<qsizetype> lengths;
        qsizetype total = 0;
        for (const XmlNode& c : run.children) {
            lengths.push_back(lengthOf(c));
            total += lengths.back();
        }
        const qsizetype end = start + total;
        pos = end;
        if (total == 0) {
            out.push_back(std::move(run));
            return;
        }
        std::set<qsizetype> cutSet { start, end };
        for (const LocalOp& op : ops) {
            for (qsizetype c : { op.a, op.b }) {
                if (c > start && c < end)
                    cutSet.insert(c);
            }
        }
        const std::vector<qsizetype> cuts(cutSet.begin(), cutSet.end());
        const XmlNode* rPr = run.child(names.w("rPr"));
        std::vector<XmlNode> segments;
        for (size_t k = 0; k + 1 < cuts.size(); ++k) {
            XmlNode s = XmlNode::element(run.name, run.attributes);
            if (rPr)
                s.children.push_back(*rPr);
            segments.push_back(std::move(s));
        }
        auto segmentAt = [&](qsizetype at) {
            size_t k = 0;
            while (k + 2 < cuts.size() && cuts[k + 1] <= at)
                ++k;
            return k;
        };
        qsizetype at = start;
        for (size_t i = 0; i < run.children.size(); ++i) {
            const XmlNode& c = run.children[i];
            const qsizetype length = lengths[i];
            if (&c == rPr) {
                continue;
            } else if (length > 0 && c.kind == XmlNode::Kind::Element
                && c.localName() == QLatin1String("t")) {
                const QString text = c.allText();
                for (size_t k = segmentAt(at); k + 1 < cuts.size() && cuts[k] < at + length; ++k) {
                    const qsizetype from = std::max(cuts[k], at) - at;
                    const qsizetype to = std::min(cuts[k + 1], at + length) - at;
                    XmlNode piece = XmlNode::element(c.name, c.attributes);
                    piece.setAttribute("xml:space", "preserve");
                    piece.children.push_back(XmlNode::textNode(text.mid(from, to - from)));
                    segments[k].children.push_back(std::move(piece));
                }
            } else {
                segments[segmentAt(at)].children.push_back(c);
            }
            at += length;
        }
        for (size_t k = 0; k < segments.size(); ++k) {
            const qsizetype s = cuts[k], e = cuts[k + 1];
            for (LocalOp& op : ops) {
                if (op.first && !op.startWritten && op.a == s) {
                    out.push_back(marker("commentRangeStart", op.commentId));
                    op.startWritten = true;
                }
            }
            bool deleted = false;
            for (const LocalOp& op : ops)
                deleted = deleted || (op.deletes && op.a <= s && e <= op.b);
            if (deleted) {
                markDeleted(segments[k]);
                XmlNode del = XmlNode::element(names.w("del"), revision());
                del.children.push_back(std::move(segments[k]));
                out.push_back(std::move(del));
            } else {
                out.push_back(std::move(segments[k]));
            }
            for (LocalOp& op : ops) {
                if (op.last && !op.endWritten && op.b == e) {
                    if (op.deletes && !op.insert.isEmpty()) {
                        out.push_back(insertedRun(op.insert, rPr));
                        ++changes;
                    }
                    out.push_back(marker("commentRangeEnd", op.commentId));
                    XmlNode reference = XmlNode::element(names.w("r"));
                    reference.children.push_back(marker("commentReference", op.commentId));
                    out.push_back(std::move(reference));
                    op.endWritten = true;
                }
            }
        }
    }

    void container(XmlNode& node)
    {
        std::vector<XmlNode> old = std::move(node.children);
        node.children.clear();
        for (XmlNode& c : old) {
            if (c.kind != XmlNode::Kind::Element) {
                node.children.push_back(std::move(c));
            } else if (c.name == names.w("r")) {
                splitRun(std::move(c), node.children);
            } else if (splittableContainer(c, names)) {
                container(c);
                node.children.push_back(std::move(c));
            } else {
                pos += lengthOf(c);
                node.children.push_back(std::move(c));
            }
        }
    }
};

void deleteParagraphMark(XmlNode& paragraph, const Names& n, QList<QPair<QString, QString>> mark)
{
    XmlNode* pPr = paragraph.child(n.w("pPr"));
    if (!pPr) {
        paragraph.children.insert(paragraph.children.begin(), XmlNode::element(n.w("pPr")));
        pPr = &paragraph.children.front();
    }
    XmlNode* rPr = pPr->child(n.w("rPr"));
    if (!rPr) {
        // CT_PPr ends with rPr, sectPr, pPrChange, in that order.
        auto at = std::find_if(pPr->children.begin(), pPr->children.end(), [&](const XmlNode& c) {
            return c.name == n.w("sectPr") || c.name == n.w("pPrChange");
        });
        rPr = &*pPr->children.insert(at, XmlNode::element(n.w("rPr")));
    }
    rPr->children.insert(rPr->children.begin(), XmlNode::element(n.w("del"), std::move(mark)));
}

struct Placement {
    int paragraph = 0; // index into Walk::done
    qsizetype a = 0;
    qsizetype b = 0;
};

} // namespace

QString wordPrefix(const XmlNode& root)
{
    for (const auto& [key, value] : root.attributes) {
        if (value == QLatin1String(kWordNamespace)) {
            if (key == QLatin1String("xmlns"))
                return {};
            if (key.startsWith(QLatin1String("xmlns:")))
                return key.mid(6);
        }
    }
    return QStringLiteral("w");
}

int largestWordId(const XmlNode& node)
{
    int largest = 0;
    for (const auto& [key, value] : node.attributes) {
        if (key == QLatin1String("w:id") || key == QLatin1String("id")) {
            bool ok = false;
            const int id = value.toInt(&ok);
            if (ok)
                largest = std::max(largest, id);
        }
    }
    for (const XmlNode& c : node.children)
        largest = std::max(largest, largestWordId(c));
    return largest;
}

TrackedChangesResult applyTrackedChanges(XmlDocument& document, const QString& text,
    const ParagraphLines& lines, const QList<RedlineEdit>& edits, const RevisionAuthor& author,
    int firstId)
{
    TrackedChangesResult result;
    Walk w;
    w.names.prefix = wordPrefix(document.root);
    walk(document.root, w, 0, false);

    // Each paragraph the reader kept is the next line that ends with its trimmed text (the
    // line starts with the list label the reader adds, if any; table rows are passed over).
    struct Aligned {
        qsizetype docStart = -1; // Document::text offset of raw[lead]
        qsizetype lead = 0;
        qsizetype length = 0;
    };
    std::vector<Aligned> aligned(w.done.size());
    qsizetype cursor = 0;
    for (size_t i = 0; i < w.done.size(); ++i) {
        const QString& raw = w.done[i].raw;
        const QString trimmed = raw.trimmed();
        if (trimmed.isEmpty() || w.done[i].inTable)
            continue;
        for (qsizetype j = cursor; j < lines.size() && j < cursor + 64; ++j) {
            const auto [ls, le] = lines[j];
            if (le - ls < trimmed.size()
                || QStringView(text).mid(le - trimmed.size(), trimmed.size()) != trimmed)
                continue;
            qsizetype lead = 0;
            while (raw.at(lead).isSpace())
                ++lead;
            aligned[i] = { le - trimmed.size(), lead, trimmed.size() };
            cursor = j + 1;
            break;
        }
    }

    int nextId = firstId;
    std::vector<std::vector<LocalOp>> ops(w.done.size());
    std::vector<bool> markDeleted(w.done.size(), false);
    for (const RedlineEdit& edit : edits) {
        const QString what
            = QStringLiteral("%1 at %2-%3").arg(edit.category).arg(edit.start).arg(edit.end);
        std::vector<Placement> touched;
        for (size_t i = 0; i < w.done.size(); ++i) {
            const Aligned& al = aligned[i];
            if (al.docStart < 0)
                continue;
            const qsizetype ds = al.docStart, de = al.docStart + al.length;
            if (edit.start < de && edit.end > ds)
                touched.push_back({ int(i), std::max(edit.start, ds) - ds + al.lead,
                    std::min(edit.end, de) - ds + al.lead });
        }
        if (touched.empty()) {
            result.notPlaced.append(
                what + QStringLiteral(": its text was not found in the document"));
            continue;
        }
        bool deletes = !edit.replacement.isEmpty();
        if (deletes) {
            QString why;
            for (const Placement& t : touched) {
                const WalkedParagraph& p = w.done[size_t(t.paragraph)];
                if (!p.editable)
                    why = QStringLiteral("it lies in a table or a text box");
                for (qsizetype k = t.a; k < t.b && why.isEmpty(); ++k) {
                    if (p.locked[k])
                        why = QStringLiteral("it overlaps an existing tracked change or a field");
                }
            }
            for (int i = touched.front().paragraph; i < touched.back().paragraph && why.isEmpty();
                 ++i) {
                if (!w.done[size_t(i)].editable || w.done[size_t(i)].sectionBreak)
                    why = QStringLiteral("it runs across a table or a section break");
            }
            if (!why.isEmpty()) {
                result.notPlaced.append(what
                    + QStringLiteral(": kept as a comment, not a tracked change (%1)").arg(why));
                deletes = false;
            }
        }
        // A comment is anchored on the characters the redline can reach.
        std::vector<Placement> anchored;
        for (Placement t : touched) {
            const WalkedParagraph& p = w.done[size_t(t.paragraph)];
            if (!p.editable)
                continue;
            while (t.a < t.b && p.locked[t.a])
                ++t.a;
            while (t.b > t.a && p.locked[t.b - 1])
                --t.b;
            if (t.a < t.b)
                anchored.push_back(t);
        }
        if (anchored.empty()) {
            result.notPlaced.append(
                what + QStringLiteral(": left out (it lies only in tables, text boxes or fields)"));
            continue;
        }
        const int commentId = nextId++;
        for (size_t k = 0; k < anchored.size(); ++k) {
            LocalOp op;
            op.a = anchored[k].a;
            op.b = anchored[k].b;
            op.deletes = deletes;
            op.first = k == 0;
            op.last = k + 1 == anchored.size();
            op.insert = op.last && deletes ? edit.replacement : QString();
            op.commentId = commentId;
            ops[size_t(anchored[k].paragraph)].push_back(op);
        }
        if (deletes) {
            for (int i = anchored.front().paragraph; i < anchored.back().paragraph; ++i)
                markDeleted[size_t(i)] = true;
        }
        result.comments.append({ commentId, edit.comment });
    }

    for (size_t i = 0; i < w.done.size(); ++i) {
        if (ops[i].empty() && !markDeleted[i])
            continue;
        Rebuild r { w.names, author, nextId, ops[i] };
        r.container(*w.done[i].node);
        result.changes += r.changes;
        if (markDeleted[i])
            deleteParagraphMark(*w.done[i].node, w.names, r.revision());
    }
    return result;
}

} // namespace cw::redline
