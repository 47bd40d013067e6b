#pragma once

// clausewright-server as a child process on a free loopback port, with the tiny golden
// model, for the tests of what talks to it (the app's remote backend, Model Settings).
#include <QByteArray>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace cw::testing {

// clausewright-server on a free port; the port comes from its "listening" log line.
class ServerProcess {
public:
    explicit ServerProcess(const QString& keyFile, const QStringList& more = {})
    {
        m_process.setProgram(QStringLiteral(CW_SERVER_PATH));
        m_process.setArguments(
            QStringList { "--model", QStringLiteral(CW_TEST_DATA_DIR "/golden/models/qwen3_moe_a"),
                "--model-name", "tiny", "--port", "0", "--threads", "1", "--api-key-file", keyFile }
            + more);
        m_process.setReadChannel(QProcess::StandardError);
        m_process.start();
        QElapsedTimer timer;
        timer.start();
        while (
            m_port == 0 && timer.elapsed() < 30000 && m_process.state() != QProcess::NotRunning) {
            m_process.waitForReadyRead(200);
            m_log += m_process.readAllStandardError();
            for (const QByteArray& line : m_log.split('\n')) {
                const QJsonObject event = QJsonDocument::fromJson(line).object();
                if (event.value("event") == QLatin1String("listening"))
                    m_port = event.value("port").toInt();
            }
        }
    }
    ~ServerProcess()
    {
        m_process.kill();
        m_process.waitForFinished(5000);
    }

    int port() const { return m_port; }
    QString url() const { return QStringLiteral("http://127.0.0.1:%1").arg(m_port); }
    QString log() { return QString::fromUtf8(m_log + m_process.readAllStandardError()); }
    void kill()
    {
        m_process.kill();
        m_process.waitForFinished(5000);
    }

private:
    QProcess m_process;
    QByteArray m_log;
    int m_port = 0;
};

} // namespace cw::testing
