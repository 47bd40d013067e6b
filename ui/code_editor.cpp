#include "ui/code_editor.h"

#include <QFontDatabase>
#include <QPainter>
#include <QTextBlock>

namespace cw::ui {

// The gutter: paints what its editor tells it, nothing of its own.
class LineNumberArea : public QWidget {
public:
    explicit LineNumberArea(CodeEditor* editor)
        : QWidget(editor)
        , m_editor(editor)
    {
        setObjectName(QStringLiteral("lineNumbers"));
    }
    QSize sizeHint() const override { return { m_editor->lineNumberWidth(), 0 }; }

protected:
    void paintEvent(QPaintEvent* event) override { m_editor->paintLineNumbers(event); }

private:
    CodeEditor* m_editor;
};

CodeEditor::CodeEditor(QWidget* parent)
    : QPlainTextEdit(parent)
    , m_gutter(new LineNumberArea(this))
{
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setTabStopDistance(4 * fontMetrics().horizontalAdvance(QLatin1Char(' ')));
    connect(this, &QPlainTextEdit::blockCountChanged, this, &CodeEditor::updateMargins);
    connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect& rect, int dy) {
        if (dy != 0)
            m_gutter->scroll(0, dy);
        else
            m_gutter->update(0, rect.y(), m_gutter->width(), rect.height());
    });
    // An edit makes the marks stale. Only edits add undo commands: the highlighter's colours
    // and setPlainText (a run's result showing its code) do not.
    connect(document(), &QTextDocument::undoCommandAdded, this, [this] {
        if (!m_notRun.isEmpty())
            setLinesNotRun({});
    });
    updateMargins();
}

int CodeEditor::lineNumberWidth() const
{
    int digits = 1;
    for (int lines = std::max(1, blockCount()); lines >= 10; lines /= 10)
        ++digits;
    // At least three digits' room, so the text does not jump at line 10 and 100.
    return fontMetrics().horizontalAdvance(QLatin1Char('9')) * std::max(digits, 3) + 12;
}

void CodeEditor::setLinesNotRun(const QSet<int>& lines)
{
    m_notRun = lines;
    m_gutter->update();
}

QSet<int> CodeEditor::linesOfRanges(const QString& ranges)
{
    QSet<int> lines;
    for (const QString& part : ranges.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QStringList ends = part.trimmed().split(QLatin1Char('-'));
        bool firstOk = false, lastOk = false;
        const int first = ends.value(0).toInt(&firstOk);
        const int last = ends.size() == 2 ? ends[1].toInt(&lastOk) : first;
        if (!firstOk || (ends.size() == 2 && !lastOk) || ends.size() > 2 || first < 1
            || last < first || last - first > 100000)
            continue;
        for (int line = first; line <= last; ++line)
            lines.insert(line);
    }
    return lines;
}

void CodeEditor::updateMargins()
{
    setViewportMargins(lineNumberWidth(), 0, 0, 0);
    const QRect inside = contentsRect();
    m_gutter->setGeometry(inside.left(), inside.top(), lineNumberWidth(), inside.height());
}

void CodeEditor::resizeEvent(QResizeEvent* event)
{
    QPlainTextEdit::resizeEvent(event);
    updateMargins();
}

void CodeEditor::changeEvent(QEvent* event)
{
    QPlainTextEdit::changeEvent(event);
    if (event->type() == QEvent::FontChange)
        updateMargins();
}

void CodeEditor::paintLineNumbers(QPaintEvent* event)
{
    QPainter painter(m_gutter);
    const QPalette& colours = palette();
    painter.fillRect(event->rect(), colours.color(QPalette::AlternateBase));
    const QColor notRun(0xc6, 0x28, 0x28);
    QColor numberColour = colours.color(QPalette::PlaceholderText);
    const int lineHeight = fontMetrics().height();
    QTextBlock block = firstVisibleBlock();
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    while (block.isValid() && top <= event->rect().bottom()) {
        const int bottom = top + qRound(blockBoundingRect(block).height());
        if (block.isVisible() && bottom >= event->rect().top()) {
            const int line = block.blockNumber() + 1;
            const bool marked = m_notRun.contains(line);
            if (marked)
                painter.fillRect(0, top, m_gutter->width(), lineHeight, notRun.lighter(185));
            painter.setPen(marked ? notRun : numberColour);
            painter.drawText(
                0, top, m_gutter->width() - 6, lineHeight, Qt::AlignRight, QString::number(line));
        }
        block = block.next();
        top = bottom;
    }
}

} // namespace cw::ui
