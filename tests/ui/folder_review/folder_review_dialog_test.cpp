// "Review a Folder…" under QT_QPA_PLATFORM=offscreen: the dialog reviews a folder of two text
// contracts into an XLSX, shows the count when done, and saves both to the history it was given.
#include "app/heads/cuad_dataset.h"
#include "app/history/history_database.h"
#include "ui/folder_review_dialog.h"

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QtTest>

class FolderReviewDialogTest : public QObject {
    Q_OBJECT
private slots:
    void reviewsAFolderIntoATable()
    {
        QTemporaryDir dir;
        auto contracts = cw::heads::readLabelledContracts(
            QStringLiteral(CW_TEST_DATA_DIR "/heads/heldout.jsonl.xz"));
        QVERIFY(contracts.ok());
        QDir().mkpath(dir.filePath("in"));
        for (int i = 0; i < 2; ++i) {
            QFile file(dir.filePath(QStringLiteral("in/c%1.txt").arg(i)));
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(contracts->at(i).text.toUtf8());
        }
        const QString history = dir.filePath("history.sqlite");
        FolderReviewDialog dialog(cw::ReviewOptions {}, history);
        dialog.show();
        const QList<QLineEdit*> edits = dialog.findChildren<QLineEdit*>();
        QCOMPARE(edits.size(), 2);
        edits[0]->setText(dir.filePath("in"));
        edits[1]->setText(dir.filePath("table.xlsx"));
        QPushButton* review = nullptr;
        for (QPushButton* b : dialog.findChildren<QPushButton*>())
            if (b->text() == QLatin1String("Review"))
                review = b;
        QVERIFY(review);
        review->click();
        QVERIFY(!review->isEnabled());
        QLabel* status = dialog.findChild<QLabel*>();
        QVERIFY(status);
        QTRY_VERIFY_WITH_TIMEOUT(status->text().startsWith("Done"), 60000);
        QVERIFY2(status->text().contains("2 contracts (2 reviewed"), qPrintable(status->text()));
        QVERIFY(review->isEnabled());
        QVERIFY(QFile::exists(dir.filePath("table.xlsx")));
        auto db = cw::HistoryDatabase::open(history);
        QVERIFY(db.ok());
        QCOMPARE(*(*db)->count(), qint64(2));
    }
};

QTEST_MAIN(FolderReviewDialogTest)
#include "folder_review_dialog_test.moc"
