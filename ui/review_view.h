#pragma once

#include "app/review/review_types.h"

#include <QWidget>

class QComboBox;
class QLineEdit;
class QPlainTextEdit;
class QSplitter;
class QStackedWidget;
class QTableView;

namespace cw {
class PdfPageRenderer;
}

namespace cw::ui {

class FindingDetailPane;
class FindingsFilterModel;
class FindingsTableModel;
class PdfView;

// One open review: the document (PDF pages, or the text of a DOCX/TXT) on the left, the
// clause table and the selected clause's details on the right. Selecting a row highlights
// the clause at its real position on the page.
class ReviewView : public QWidget {
    Q_OBJECT
public:
    explicit ReviewView(QWidget* parent = nullptr);
    ~ReviewView() override;

    void setReview(const cw::Review& review);
    const cw::Review& review() const { return m_review; }
    bool hasReview() const { return !m_review.document.path.isEmpty(); }
    void setCategories(const QStringList& categories);
    void applyEdit(
        int findingIndex, const QString& category, cw::Risk risk, const QString& comment);

    PdfView* pdfView() const { return m_pdfView; }
    QTableView* table() const { return m_table; }
    QLineEdit* filterEdit() const { return m_filter; }
    void selectFinding(int findingIndex);
    QString documentError() const { return m_documentError; }

signals:
    void findingEdited(
        int findingIndex, const QString& category, cw::Risk risk, const QString& comment);
    void findingSelected(int findingIndex);

private:
    void onCurrentRowChanged();
    void showDocument();

    cw::Review m_review;
    std::unique_ptr<cw::PdfPageRenderer> m_renderer;
    QString m_documentError;
    QSplitter* m_splitter = nullptr;
    QStackedWidget* m_documentStack = nullptr;
    PdfView* m_pdfView = nullptr;
    QPlainTextEdit* m_textView = nullptr;
    QLineEdit* m_filter = nullptr;
    QComboBox* m_riskFilter = nullptr;
    QTableView* m_table = nullptr;
    FindingsTableModel* m_model = nullptr;
    FindingsFilterModel* m_filterModel = nullptr;
    FindingDetailPane* m_detail = nullptr;
};

} // namespace cw::ui
