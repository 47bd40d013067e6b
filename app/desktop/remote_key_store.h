#pragma once

#include "engine/common/result.h"

#include <QObject>
#include <QString>
#include <functional>

namespace cw {

// Keeps the remote server's API key out of the settings file and the history database: in
// the desktop keyring (Secret Service or KWallet, through qtkeychain) where one answers, else
// in a file only the user can read (remote-api-key in the config folder, mode 0600).
// CW_NO_KEYRING=1 in the environment skips the keyring (headless machines, tests).
class RemoteKeyStore {
public:
    // The saved key; empty when none is saved. `where` says where it was found. Waits for
    // the keyring (a D-Bus round trip): for worker threads and the command line.
    static Result<QString> read(QString* where = nullptr);
    // The same without waiting, for the UI thread: `done` is called on `context`'s thread.
    static void readLater(QObject* context,
        std::function<void(const Result<QString>& key, const QString& where)> done);
    // Saves the key (an empty key removes it); returns where it went ("the desktop keyring"
    // or the file's path).
    static Result<QString> write(const QString& key);
    static QString keyFilePath();
};

} // namespace cw
