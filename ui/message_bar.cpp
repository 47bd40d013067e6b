#include "ui/message_bar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace cw::ui {

MessageBar::MessageBar(QWidget* parent)
    : QFrame(parent)
{
    setObjectName(QStringLiteral("messageBar"));
    setAccessibleName(tr("Message"));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(10, 6, 6, 6);
    m_label = new QLabel(this);
    m_label->setWordWrap(true);
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* close = new QToolButton(this);
    close->setText(QStringLiteral("✕"));
    close->setAccessibleName(tr("Dismiss message"));
    close->setAutoRaise(true);
    connect(close, &QToolButton::clicked, this, &QWidget::hide);
    layout->addWidget(m_label, 1);
    layout->addWidget(close);
    hide();
}

void MessageBar::showMessage(const QString& text, Kind kind)
{
    m_label->setText(text);
    // The text colour is set on the label and the close button too: they would otherwise take
    // the palette's, which in the dark theme is light grey on this light background.
    setStyleSheet(kind == Kind::Error
            ? QStringLiteral("QFrame#messageBar { background: #fbe3e1; "
                             "border-bottom: 1px solid #e0a09a; }"
                             "QFrame#messageBar QLabel, QFrame#messageBar QToolButton "
                             "{ color: #5a1410; background: transparent; }")
            : QStringLiteral("QFrame#messageBar { background: #e3eefb; "
                             "border-bottom: 1px solid #9ab8e0; }"
                             "QFrame#messageBar QLabel, QFrame#messageBar QToolButton "
                             "{ color: #10305a; background: transparent; }"));
    show();
}

QString MessageBar::text() const
{
    return isVisible() ? m_label->text() : QString();
}

} // namespace cw::ui
