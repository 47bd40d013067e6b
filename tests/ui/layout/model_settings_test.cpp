// Model Settings on a tiny GGUF model (context 4,096) under QT_QPA_PLATFORM=offscreen: no label
// shows a literal "&", the summary is the memory plan in words, and a context above the
// model's maximum is lowered to it before it can be saved.
#include "app/desktop/app_settings.h"
#include "tests/engine/gguf/tiny_gguf_model.h"
#include "ui/model_settings_dialog.h"

#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {

void saveScreenshot(QWidget* widget, const QString& name)
{
    const QPixmap shot = widget->grab();
    QVERIFY(!shot.isNull());
    QVERIFY(shot.save(QDir(QStringLiteral(CW_TEST_BINARY_DIR)).filePath(name)));
}

QString summary(QWidget* dialog)
{
    QWidget* shown = dialog->findChild<QWidget*>(QStringLiteral("modelSummary"));
    if (auto* label = qobject_cast<QLabel*>(shown))
        return label->text();
    return shown ? shown->property("plainText").toString() : QString();
}

QSpinBox* contextBox(QWidget* dialog)
{
    for (auto* box : dialog->findChildren<QSpinBox*>()) {
        if (box->accessibleName() == QLatin1String("Context length"))
            return box;
    }
    return nullptr;
}

} // namespace

class ModelSettingsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QApplication::setApplicationName(QStringLiteral("clausewright-model-settings-test"));
        qputenv("CW_NO_KEYRING", "1");
        QSettings().clear();
        QVERIFY(m_dir.isValid());
        m_model = m_dir.filePath(QStringLiteral("tiny-qwen35moe.gguf"));
        QVERIFY(cw::test::writeTinyGguf(m_model.toStdString()).ok());
        QVERIFY2(QFileInfo::exists(QApplication::applicationDirPath() + "/clausewright-cli"),
            "clausewright-cli is not beside the test (the build links it there)");
    }

    void labelsShowNoAmpersand()
    {
        cw::ui::ModelSettingsDialog dialog;
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        // A label's "&" marks its shortcut only when the label has a buddy to focus;
        // without one it is shown as it is.
        for (auto* label : dialog.findChildren<QLabel*>()) {
            if (label->textFormat() == Qt::RichText || !label->text().contains(QLatin1Char('&')))
                continue;
            QVERIFY2(label->buddy(), qPrintable(label->text() + QStringLiteral(" shows its &")));
        }
    }

    void showsTheMemoryPlanAndHoldsTheContextToTheModel()
    {
        cw::ModelSettings saved;
        saved.contextLength = 32768; // the default, more than the model takes
        cw::AppSettings::setModel(saved);
        cw::ui::ModelSettingsDialog dialog;
        dialog.resize(640, 680);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        dialog.setModelPath(m_model);
        QTRY_VERIFY_WITH_TIMEOUT(!summary(&dialog).startsWith(QStringLiteral("Reading")), 30000);
        QTest::qWait(100);
        saveScreenshot(&dialog, QStringLiteral("model-settings.png"));
        const QString text = summary(&dialog);
        QVERIFY2(!text.trimmed().startsWith(QLatin1Char('{')), qPrintable(text)); // not JSON
        QVERIFY2(text.startsWith(QStringLiteral("Fits: ")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("weights ")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("context up to 4,096 tokens")), qPrintable(text));
        QSpinBox* context = contextBox(&dialog);
        QVERIFY(context);
        QCOMPARE(context->value(), 4096);
        QCOMPARE(context->maximum(), 4096);
        auto* note = dialog.findChild<QLabel*>(QStringLiteral("contextNote"));
        QVERIFY(note && note->isVisible());
        QVERIFY2(note->text().contains(QStringLiteral("4,096")), qPrintable(note->text()));

        // The advanced precision choice shows the saved one and reaches the settings.
        QComboBox* precision = nullptr;
        for (auto* box : dialog.findChildren<QComboBox*>())
            if (box->accessibleName() == QLatin1String("Precision"))
                precision = box;
        QVERIFY(precision);
        QCOMPARE(precision->currentData().toString(), QStringLiteral("bf16"));
        precision->setCurrentIndex(precision->findData(QStringLiteral("f32")));

        auto* buttons = dialog.findChild<QDialogButtonBox*>();
        QVERIFY(buttons);
        buttons->button(QDialogButtonBox::Save)->click();
        QTRY_COMPARE(dialog.result(), int(QDialog::Accepted));
        QCOMPARE(cw::AppSettings::model().modelPath, m_model);
        QCOMPARE(cw::AppSettings::model().contextLength, 4096);
        QCOMPARE(cw::AppSettings::model().precision, QStringLiteral("f32"));
    }

    void refusesToSaveAModelThatCannotBeRead()
    {
        const QString broken = m_dir.filePath(QStringLiteral("broken.gguf"));
        QFile file(broken);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("GGUF but nothing else");
        file.close();
        cw::ModelSettings before = cw::AppSettings::model();
        cw::ui::ModelSettingsDialog dialog;
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        dialog.setModelPath(broken);
        dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Save)->click();
        QTRY_VERIFY_WITH_TIMEOUT(
            summary(&dialog).contains(QStringLiteral("cannot be used")), 30000);
        QVERIFY(dialog.isVisible());
        QVERIFY2(
            summary(&dialog).contains(QStringLiteral("broken.gguf")), qPrintable(summary(&dialog)));
        QCOMPARE(cw::AppSettings::model().modelPath, before.modelPath);
    }

private:
    QTemporaryDir m_dir;
    QString m_model;
};

QTEST_MAIN(ModelSettingsTest)
#include "model_settings_test.moc"
