#pragma once

#include <QMainWindow>

class QLabel;

namespace cw::ui {

// The application's main window: a drop zone for contracts until a review is open.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

signals:
    void contractDropped(const QString& path);

private:
    void createMenus();

    QLabel* m_dropZone = nullptr;
};

} // namespace cw::ui
