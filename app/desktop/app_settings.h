#pragma once

#include "app/generation/backend_order.h"

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace cw {

// What the desktop application remembers between runs (QSettings under the hood).
struct ModelSettings {
    QString modelPath; // GGUF file or Hugging Face folder; empty: fast heads only
    QString device = QStringLiteral("cpu"); // "cpu" or "cuda:N" (engine::ModelOptions::device)
    int contextLength = 32768; // tokens per sequence (sizes the GPU's KV pool)
    int threads = 0; // 0: all cores
    // The model's arithmetic: "bf16" (fastest), "tf32" or "f32" (the reference;
    // engine/runtime/precision.h). Model Settings shows it as an advanced choice.
    QString precision = QStringLiteral("bf16");
    // GiB of GPU memory the model may take; 0: the card's free memory. Under the model's size
    // the least chosen experts stay in host memory (engine::ModelOptions::gpuMemoryGiB).
    double gpuMemoryGiB = 0.0;
};

// The remote OpenAI-compatible server (Model Settings ▸ Remote server). The API key is not
// here: RemoteKeyStore keeps it in the keyring or a 0600 file.
struct RemoteServerSettings {
    QString baseUrl;
    QString model; // empty: the server's first model
    generation::BackendOrder order = generation::BackendOrder::LocalOnly;
};

class AppSettings {
public:
    static ModelSettings model();
    static void setModel(const ModelSettings& settings);

    static RemoteServerSettings remoteServer();
    static void setRemoteServer(const RemoteServerSettings& settings);

    static QString playbookPath(); // empty: the default playbook
    static void setPlaybookPath(const QString& path);

    static QString language(); // "" (follow the system), "en", "zh_CN"
    static void setLanguage(const QString& language);

    static QStringList recentFiles();
    static void addRecentFile(const QString& path);

    // The first-run page: shown until the user picks how to start ("fast" heads now, or
    // "model"), then only from Help ▸ Getting Started.
    static QString firstRunChoice(); // empty: not chosen yet
    static void setFirstRunChoice(const QString& choice);

    static QByteArray windowGeometry();
    static QByteArray windowState();
    static void setWindowGeometry(const QByteArray& geometry, const QByteArray& state);
    // The code panel beside the review: shown or not, and the splitter's sizes.
    static bool codePanelShown();
    static QByteArray codeSplitterState();
    static void setCodePanel(bool shown, const QByteArray& splitterState);
};

} // namespace cw
