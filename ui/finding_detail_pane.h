#pragma once

#include "app/review/review_types.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QTextBrowser;

namespace cw::ui {

// One finding in full: its clause text, extracted fields, the playbook's position and the
// model's note, with controls to correct the category or risk and add a comment.
class FindingDetailPane : public QWidget {
    Q_OBJECT
public:
    explicit FindingDetailPane(QWidget* parent = nullptr);

    void setCategories(const QStringList& categories);
    void showFinding(const cw::Review* review, int findingIndex); // -1 clears
    int findingIndex() const { return m_findingIndex; }
    // The language model's note on the shown finding's category while the model writes it:
    // set when the finding is shown, then grown piece by piece. Empty text hides it.
    void setModelNote(const QString& note, bool writing);
    void appendModelNote(const QString& piece);
    void setModelNoteFinished();
    QString modelNote() const;

signals:
    void findingEdited(
        int findingIndex, const QString& category, cw::Risk risk, const QString& comment);

private:
    void applyEdit();

    int m_findingIndex = -1;
    QStringList m_categories; // the playbook's; a finding's own is added while it shows
    QLabel* m_title = nullptr;
    QTextBrowser* m_body = nullptr;
    QLabel* m_noteTitle = nullptr;
    QPlainTextEdit* m_note = nullptr;
    QComboBox* m_category = nullptr;
    QComboBox* m_risk = nullptr;
    QPlainTextEdit* m_comment = nullptr;
    QPushButton* m_save = nullptr;
};

} // namespace cw::ui
