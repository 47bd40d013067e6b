// The review view while the language model works: the fast review shows, the note on the
// selected finding's category grows piece by piece, and the model's findings join the table.
#include "ui/finding_detail_pane.h"
#include "ui/findings_table_model.h"
#include "ui/review_view.h"

#include <QPlainTextEdit>
#include <QTableView>
#include <QtTest>

using namespace cw;

namespace {

Review fastReview()
{
    Review r;
    r.document.path = QStringLiteral("contract.txt");
    r.document.format = DocumentFormat::PlainText;
    r.document.text = QStringLiteral("1. Governing Law. Texas law governs. 2. Insurance. "
                                     "Supplier keeps insurance.");
    for (const auto& [category, words] :
        { std::pair { QStringLiteral("Governing Law"), QStringLiteral("Texas law governs.") },
            std::pair {
                QStringLiteral("Insurance"), QStringLiteral("Supplier keeps insurance.") } }) {
        Finding f;
        f.category = category;
        f.start = r.document.text.indexOf(words);
        f.end = f.start + words.size();
        f.text = words;
        f.source = QStringLiteral("fast");
        f.risk = Risk::Low;
        r.findings.append(f);
    }
    return r;
}

int rowOf(ui::ReviewView& view, const QString& category)
{
    QAbstractItemModel* model = view.table()->model();
    for (int row = 0; row < model->rowCount(); ++row) {
        const QModelIndex index = model->index(row, ui::FindingsTableModel::CategoryColumn);
        if (index.data(Qt::DisplayRole).toString().startsWith(category))
            return row;
    }
    return -1;
}

} // namespace

class LiveReviewTest : public QObject {
    Q_OBJECT
private slots:
    void notesGrowAndModelFindingsJoinTheTable()
    {
        ui::ReviewView view;
        view.resize(1000, 700);
        view.show();
        view.showFastReview(fastReview());
        QVERIFY(view.isLive());
        view.setModelQuestions({ { 0, { "Governing Law" }, {} }, { 1, { "Insurance" }, {} } });
        view.table()->setCurrentIndex(
            view.table()->model()->index(rowOf(view, "Governing Law"), 0));
        auto* note = view.detailPane()->findChild<QPlainTextEdit*>("modelNote");
        QVERIFY(note);
        QVERIFY(note->isVisibleTo(&view)); // "writing…" before the first piece

        const QStringList pieces { "Texas law ", "is outside ", "the firm's list." };
        for (const QString& p : pieces) {
            view.appendModelNote(0, p);
            view.appendModelNote(1, QStringLiteral("x")); // another question's note
        }
        QCOMPARE(view.detailPane()->modelNote(), pieces.join(QString()));
        QCOMPARE(view.modelNote(0), pieces.join(QString()));
        QCOMPARE(view.modelNote(1), QStringLiteral("xxx"));

        Finding model = fastReview().findings[0];
        model.source = QStringLiteral("llm");
        model.risk = Risk::Medium;
        model.rationale = pieces.join(QString());
        const int before = view.table()->model()->rowCount();
        view.appendModelFindings(0, { model });
        QCOMPARE(view.table()->model()->rowCount(), before + 1);
        QVERIFY(rowOf(view, "Governing Law · model") >= 0);
        // The selection survives the new row.
        QCOMPARE(view.detailPane()->modelNote(), pieces.join(QString()));

        // Selecting the other finding shows its own question's note.
        view.table()->setCurrentIndex(view.table()->model()->index(rowOf(view, "Insurance"), 0));
        QCOMPARE(view.detailPane()->modelNote(), QStringLiteral("xxx"));

        // The final review ends the live state.
        view.setReview(fastReview());
        QVERIFY(!view.isLive());
        view.appendModelNote(0, QStringLiteral("late"));
        QCOMPARE(view.modelNote(0), QString());
    }
};

QTEST_MAIN(LiveReviewTest)
#include "live_review_test.moc"
