// Model Settings > Remote server: Test lists a real server's models (and says when the key is
// refused) without blocking the window; Save keeps the URL, model and order in the settings
// and the key in its owner-only file (no keyring here), never in the settings file.
#include "app/desktop/app_settings.h"
#include "app/desktop/remote_key_store.h"
#include "tests/app/remote/server_process.h"
#include "ui/remote_server_box.h"

#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>
#include <memory>

namespace {

const QString kKey = QStringLiteral("ui-test-key-0123456789abcdef");

template <typename Widget> Widget* byName(QWidget& parent, const QString& accessibleName)
{
    for (auto* w : parent.findChildren<Widget*>())
        if (w->accessibleName() == accessibleName)
            return w;
    return nullptr;
}

} // namespace

class RemoteServerBoxTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        qputenv("XDG_CONFIG_HOME", m_dir.filePath(QStringLiteral("config")).toUtf8());
        QCoreApplication::setOrganizationName(QStringLiteral("ClausewrightTest"));
        QCoreApplication::setApplicationName(QStringLiteral("ui_remote_server"));
        m_keyFile = m_dir.filePath(QStringLiteral("keys"));
        QFile keys(m_keyFile);
        QVERIFY(keys.open(QIODevice::WriteOnly));
        QVERIFY(keys.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));
        keys.write(kKey.toUtf8() + "\n");
        keys.close();
        m_server = std::make_unique<cw::testing::ServerProcess>(m_keyFile);
        QVERIFY2(m_server->port() > 0, qPrintable(m_server->log()));
    }

    void testListsTheModelsAndSaveKeepsTheKeyOutOfTheSettings()
    {
        cw::ui::RemoteServerBox box;
        box.show();
        auto* url = byName<QLineEdit>(box, QStringLiteral("Server URL"));
        auto* key = byName<QLineEdit>(box, QStringLiteral("API key"));
        auto* model = byName<QComboBox>(box, QStringLiteral("Model name on the server"));
        auto* order = byName<QComboBox>(box, QStringLiteral("Where the model runs"));
        auto* status = box.findChild<QLabel*>(QStringLiteral("remoteStatus"));
        auto* test = box.findChild<QPushButton*>();
        QVERIFY(url && key && model && order && status && test);
        QTRY_VERIFY(key->isEnabled()); // the saved key (none) has been read

        url->setText(m_server->url());
        key->setText(QStringLiteral("ui-test-key-wrong-000000000"));
        test->click();
        QTRY_VERIFY_WITH_TIMEOUT(status->text().contains("refused the API key"), 10000);

        key->setText(kKey);
        test->click();
        QTRY_VERIFY_WITH_TIMEOUT(status->text().contains("serves: tiny"), 10000);
        QCOMPARE(model->currentText(), QStringLiteral("tiny"));

        order->setCurrentIndex(order->findText(QStringLiteral("Remote server only")));
        QVERIFY(box.save());
        const cw::RemoteServerSettings saved = cw::AppSettings::remoteServer();
        QCOMPARE(saved.baseUrl, m_server->url());
        QCOMPARE(saved.model, QStringLiteral("tiny"));
        QCOMPARE(saved.order, cw::generation::BackendOrder::RemoteOnly);
        QCOMPARE(*cw::RemoteKeyStore::read(), kKey);
        QCOMPARE(QFile(cw::RemoteKeyStore::keyFilePath()).permissions() & 0x0077,
            QFileDevice::Permissions {});
        QSettings settings;
        settings.sync();
        QFile file(settings.fileName());
        QVERIFY(file.open(QIODevice::ReadOnly));
        QVERIFY(!file.readAll().contains(kKey.toUtf8()));
    }

private:
    QTemporaryDir m_dir;
    QString m_keyFile;
    std::unique_ptr<cw::testing::ServerProcess> m_server;
};

QTEST_MAIN(RemoteServerBoxTest)
#include "remote_server_box_test.moc"
