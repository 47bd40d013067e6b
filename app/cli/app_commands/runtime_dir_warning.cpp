// Qt warns "QStandardPaths: XDG_RUNTIME_DIR not set, defaulting to '/tmp/runtime-root'" on
// every command run where that variable is unset (ssh sessions, containers, cron); the
// default it falls back to is fine for a command-line tool, so the line is dropped and every
// other message goes to Qt's own handler. Installed before main, so no command can miss it.
#include <QString>
#include <QtGlobal>

namespace {

QtMessageHandler previousHandler = nullptr;

void dropRuntimeDirWarning(QtMsgType type, const QMessageLogContext& context, const QString& text)
{
    if (type == QtWarningMsg && text.startsWith(QLatin1String("QStandardPaths: "))
        && text.contains(QLatin1String("XDG_RUNTIME_DIR")))
        return;
    if (previousHandler)
        previousHandler(type, context, text);
}

const bool kInstalled = [] {
    previousHandler = qInstallMessageHandler(dropRuntimeDirWarning);
    return true;
}();

} // namespace
