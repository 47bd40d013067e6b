#pragma once

#include <QGroupBox>

class QComboBox;
class QLabel;
class QLineEdit;
class QNetworkAccessManager;
class QPushButton;

namespace cw::ui {

// Model Settings ▸ Remote server: an OpenAI-compatible server (clausewright-server, vLLM,
// SGLang, llama.cpp's server) the review's model questions can go to, and the order in which
// the in-process model and the server are tried. Test lists the server's models without
// blocking the window. The API key is saved to the keyring (or a 0600 file), never to the
// settings file.
class RemoteServerBox : public QGroupBox {
    Q_OBJECT
public:
    explicit RemoteServerBox(QWidget* parent = nullptr);

    // Writes the settings and the key; false (with a message shown) when the key could not
    // be saved.
    bool save();

private:
    void test();

    QComboBox* m_order = nullptr;
    QLineEdit* m_url = nullptr;
    QLineEdit* m_key = nullptr;
    QComboBox* m_model = nullptr;
    QPushButton* m_test = nullptr;
    QLabel* m_status = nullptr;
    QNetworkAccessManager* m_network = nullptr;
    QString m_savedKey;
    bool m_keyRead = false;
};

} // namespace cw::ui
