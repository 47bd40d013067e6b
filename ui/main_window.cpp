#include "ui/main_window.h"

#include <QAction>
#include <QApplication>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMimeData>
#include <QStatusBar>
#include <QUrl>

namespace cw::ui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
{
    setWindowTitle(tr("Clausewright"));
    setObjectName(QStringLiteral("mainWindow"));
    setAcceptDrops(true);
    resize(1280, 800);

    m_dropZone = new QLabel(tr("Drop a contract here (PDF, DOCX or TXT)\nor choose File ▸ Open"), this);
    m_dropZone->setObjectName(QStringLiteral("dropZone"));
    m_dropZone->setAccessibleName(tr("Contract drop zone"));
    m_dropZone->setAlignment(Qt::AlignCenter);
    m_dropZone->setStyleSheet(QStringLiteral(
        "QLabel#dropZone { border: 2px dashed palette(mid); border-radius: 12px; margin: 48px;"
        " font-size: 18px; color: palette(text); }"));
    setCentralWidget(m_dropZone);
    createMenus();
    statusBar()->showMessage(tr("No model loaded: reviews use the fast heads."));
}

void MainWindow::createMenus()
{
    auto* fileMenu = menuBar()->addMenu(tr("&File"));
    auto* open = fileMenu->addAction(tr("&Open…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open contract"), QString(), tr("Contracts (*.pdf *.docx *.txt)"));
        if (!path.isEmpty())
            emit contractDropped(path);
    });
    open->setShortcut(QKeySequence::Open);
    fileMenu->addSeparator();
    auto* quit = fileMenu->addAction(tr("&Quit"), qApp, &QApplication::quit);
    quit->setShortcut(QKeySequence::Quit);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    for (const QUrl& url : event->mimeData()->urls()) {
        if (url.isLocalFile())
            emit contractDropped(url.toLocalFile());
    }
}

} // namespace cw::ui
