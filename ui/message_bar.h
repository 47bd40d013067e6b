#pragma once

#include <QFrame>

class QLabel;

namespace cw::ui {

// A calm, non-modal line at the top of the window for errors and notices: the user reads
// it and carries on; nothing blocks, and tests can read it.
class MessageBar : public QFrame {
    Q_OBJECT
public:
    enum class Kind { Info, Error };
    explicit MessageBar(QWidget* parent = nullptr);

    void showMessage(const QString& text, Kind kind);
    QString text() const;

private:
    QLabel* m_label = nullptr;
};

} // namespace cw::ui
