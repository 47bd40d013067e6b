// clausewright: the desktop application's entry point.
#include "app/desktop/app_settings.h"
#include "ui/main_window.h"
#include "ui/ui_language.h"
#include "ui/ui_theme.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Clausewright"));
    QApplication::setOrganizationName(QStringLiteral("Clausewright"));
    QApplication::setApplicationVersion(QStringLiteral(CW_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("io.github.clausewright.Clausewright"));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Local contract review and unit-test generation with an in-process model"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("file"),
        QStringLiteral("contract to review (PDF, DOCX or TXT)"), QStringLiteral("[file]"));
    QCommandLineOption theme(
        QStringLiteral("theme"), QStringLiteral("system, light or dark"), QStringLiteral("theme"));
    parser.addOption(theme);
    parser.process(app);

    cw::ui::installUiLanguage(cw::AppSettings::language());
    cw::ui::applyUiTheme(parser.isSet(theme)
            ? parser.value(theme)
            : QSettings().value(QStringLiteral("ui/theme"), QStringLiteral("system")).toString());

    cw::ui::MainWindow window;
    window.show();
    if (!parser.positionalArguments().isEmpty())
        window.openContract(parser.positionalArguments().constFirst());
    return app.exec();
}
