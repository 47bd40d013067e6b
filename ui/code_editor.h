#pragma once

#include <QPlainTextEdit>
#include <QSet>

namespace cw::ui {

// A plain-text editor for code with line numbers in a gutter on its left, so that "lines not
// run: 13, 24-26" can be found. Lines the last run did not reach are marked in the gutter
// until the text changes (the numbers would no longer match).
class CodeEditor : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit CodeEditor(QWidget* parent = nullptr);

    int lineNumberWidth() const;
    QWidget* lineNumberArea() const { return m_gutter; }
    // 1-based line numbers; empty clears the marks.
    void setLinesNotRun(const QSet<int>& lines);
    const QSet<int>& linesNotRun() const { return m_notRun; }
    // "12-14, 20" (as coverage reports name lines) to {12, 13, 14, 20}; what is not a number
    // or a range of numbers is left out.
    static QSet<int> linesOfRanges(const QString& ranges);

protected:
    void resizeEvent(QResizeEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    friend class LineNumberArea;
    void paintLineNumbers(QPaintEvent* event);
    void updateMargins();

    QWidget* m_gutter = nullptr;
    QSet<int> m_notRun;
};

} // namespace cw::ui
