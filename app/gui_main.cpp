// clausewright: the desktop application's entry point.
#include "ui/main_window.h"

#include <QApplication>
#include <QCommandLineParser>

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Clausewright"));
    QApplication::setOrganizationName(QStringLiteral("Clausewright"));
    QApplication::setApplicationVersion(QStringLiteral(CW_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Local contract review and unit-test generation with an in-process model"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("file"), QStringLiteral("contract to open"),
                                 QStringLiteral("[file]"));
    parser.process(app);

    cw::ui::MainWindow window;
    window.show();
    return app.exec();
}
