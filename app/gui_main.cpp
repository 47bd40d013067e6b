// clausewright: the desktop application's entry point.
#include "app/desktop/app_settings.h"
#include "app/desktop/user_folders.h"
#include "ui/main_window.h"
#include "ui/ui_language.h"
#include "ui/ui_theme.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>
#include <cstring>
#include <memory>

namespace {

// --help and --version print and exit: they need no display (a terminal over SSH has none,
// and QApplication without one aborts).
bool onlyPrints(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        for (const char* option : { "-h", "--help", "--help-all", "-v", "--version" }) {
            if (std::strcmp(argv[i], option) == 0)
                return true;
        }
    }
    return false;
}

} // namespace

int main(int argc, char** argv)
{
    const std::unique_ptr<QCoreApplication> application = onlyPrints(argc, argv)
        ? std::make_unique<QCoreApplication>(argc, argv)
        : std::make_unique<QApplication>(argc, argv);
    QCoreApplication& app = *application;
    QApplication::setApplicationName(QStringLiteral("Clausewright"));
    QApplication::setOrganizationName(QStringLiteral("Clausewright"));
    QApplication::setApplicationVersion(QStringLiteral(CW_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("io.github.clausewright.Clausewright"));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Contract review, and unit tests for code that are run before they are "
                       "shown, with a language model that runs on this computer"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("files"),
        QStringLiteral("contracts to review (PDF, DOCX or TXT), or a GGUF model to open in Model "
                       "Settings"),
        QStringLiteral("[files...]"));
    QCommandLineOption theme(
        QStringLiteral("theme"), QStringLiteral("system, light or dark"), QStringLiteral("theme"));
    parser.addOption(theme);
    parser.process(app);

    cw::ui::installUiLanguage(cw::AppSettings::language());
    cw::ui::applyUiTheme(parser.isSet(theme)
            ? parser.value(theme)
            : QSettings().value(QStringLiteral("ui/theme"), QStringLiteral("system")).toString());

    // First start: the data folder and the folder for the user's plugins (the history
    // database is created in it when the window opens the history).
    const auto folders = cw::createUserFolders();
    if (!folders)
        qWarning("%s", folders.error().message.c_str());

    cw::ui::MainWindow window;
    window.show();
    for (const QString& file : parser.positionalArguments())
        window.openFile(file); // several contracts are queued and reviewed one after another
    return app.exec();
}
