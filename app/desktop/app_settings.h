#pragma once

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
};

class AppSettings {
public:
    static ModelSettings model();
    static void setModel(const ModelSettings& settings);

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
};

} // namespace cw
