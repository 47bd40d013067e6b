#include "ui/main_window.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QSignalSpy>
#include <QTest>

class MainWindowTest : public QObject {
    Q_OBJECT
private slots:
    void opensAnEmptyWindowAndGrabsIt()
    {
        cw::ui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QCOMPARE(window.windowTitle(), QStringLiteral("Clausewright"));
        QVERIFY(window.findChild<QLabel*>(QStringLiteral("dropZone")) != nullptr);
        const QPixmap shot = window.grab();
        QVERIFY(!shot.isNull());
        const QString path = QDir(QStringLiteral(CW_TEST_BINARY_DIR)).filePath(QStringLiteral("main_window_empty.png"));
        QVERIFY(shot.save(path));
        QVERIFY(QFileInfo(path).size() > 1000);
    }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
