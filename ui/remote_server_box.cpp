#include "ui/remote_server_box.h"

#include "app/desktop/app_settings.h"
#include "app/desktop/remote_key_store.h"
#include "app/generation/remote_server.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QPushButton>

namespace cw::ui {

RemoteServerBox::RemoteServerBox(QWidget* parent)
    : QGroupBox(tr("Remote server"), parent)
    , m_network(new QNetworkAccessManager(this))
{
    setObjectName(QStringLiteral("remoteServer"));
    auto* form = new QFormLayout(this);
    m_order = new QComboBox(this);
    m_order->setAccessibleName(tr("Where the model runs"));
    using generation::BackendOrder;
    m_order->addItem(tr("This computer only"), int(BackendOrder::LocalOnly));
    m_order->addItem(tr("Remote server only"), int(BackendOrder::RemoteOnly));
    m_order->addItem(
        tr("This computer, else the remote server"), int(BackendOrder::LocalThenRemote));
    m_order->addItem(tr("Remote server, else this computer"), int(BackendOrder::RemoteThenLocal));
    form->addRow(tr("&Use:"), m_order);
    m_url = new QLineEdit(this);
    m_url->setAccessibleName(tr("Server URL"));
    m_url->setPlaceholderText(QStringLiteral("http://gpu-box:8642"));
    form->addRow(tr("Server &URL:"), m_url);
    m_key = new QLineEdit(this);
    m_key->setAccessibleName(tr("API key"));
    m_key->setEchoMode(QLineEdit::Password);
    m_key->setPlaceholderText(tr("Bearer token, if the server asks for one"));
    form->addRow(tr("API &key:"), m_key);
    auto* modelRow = new QHBoxLayout;
    m_model = new QComboBox(this);
    m_model->setEditable(true);
    m_model->setAccessibleName(tr("Model name on the server"));
    m_model->lineEdit()->setPlaceholderText(tr("the server's first model"));
    m_test = new QPushButton(tr("&Test"), this);
    m_test->setToolTip(tr("Connect and list the server's models"));
    modelRow->addWidget(m_model, 1);
    modelRow->addWidget(m_test);
    // A row of two widgets: the label needs its buddy named, or it shows the "&" itself.
    auto* modelLabel = new QLabel(tr("M&odel:"), this);
    modelLabel->setBuddy(m_model);
    form->addRow(modelLabel, modelRow);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("remoteStatus"));
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    form->addRow(m_status);
    connect(m_test, &QPushButton::clicked, this, &RemoteServerBox::test);

    const RemoteServerSettings settings = AppSettings::remoteServer();
    m_order->setCurrentIndex(std::max(0, m_order->findData(int(settings.order))));
    m_url->setText(settings.baseUrl);
    m_model->setEditText(settings.model);
    // The keyring answers over D-Bus: the field fills in when it has (the window never waits).
    m_key->setEnabled(false);
    RemoteKeyStore::readLater(this, [this](const Result<QString>& key, const QString& where) {
        m_key->setEnabled(true);
        m_keyRead = true;
        if (!key) {
            m_status->setText(QString::fromStdString(key.error().message));
            return;
        }
        m_savedKey = *key;
        if (m_key->text().isEmpty())
            m_key->setText(*key);
        if (!key->isEmpty())
            m_status->setText(tr("API key kept in %1.").arg(where));
    });
}

void RemoteServerBox::test()
{
    generation::RemoteServer server;
    server.baseUrl = m_url->text().trimmed();
    server.apiKey = m_key->text().trimmed();
    auto reply = generation::requestRemoteModels(*m_network, server);
    if (!reply) {
        m_status->setText(QString::fromStdString(reply.error().message));
        return;
    }
    m_test->setEnabled(false);
    m_status->setText(tr("Connecting to %1…").arg(server.baseUrl));
    QNetworkReply* r = *reply;
    connect(r, &QNetworkReply::finished, this, [this, r] {
        r->deleteLater();
        m_test->setEnabled(true);
        auto models = generation::readRemoteModels(*r);
        if (!models) {
            m_status->setText(QString::fromStdString(models.error().message));
            return;
        }
        const QString chosen = m_model->currentText();
        m_model->clear();
        m_model->addItems(*models);
        m_model->setEditText(chosen.isEmpty() && !models->isEmpty() ? models->first() : chosen);
        m_status->setText(models->isEmpty()
                ? tr("Connected; the server lists no model.")
                : tr("Connected; the server serves: %1").arg(models->join(QStringLiteral(", "))));
    });
}

bool RemoteServerBox::save()
{
    RemoteServerSettings settings;
    settings.baseUrl = m_url->text().trimmed();
    settings.model = m_model->currentText().trimmed();
    settings.order = generation::BackendOrder(m_order->currentData().toInt());
    AppSettings::setRemoteServer(settings);
    const QString key = m_key->text().trimmed();
    if (!m_keyRead || key == m_savedKey)
        return true; // unchanged (or not read yet: nothing to overwrite it with)
    auto where = RemoteKeyStore::write(key);
    if (!where) {
        m_status->setText(tr("The API key could not be saved: %1")
                              .arg(QString::fromStdString(where.error().message)));
        return false;
    }
    m_savedKey = key;
    return true;
}

} // namespace cw::ui
