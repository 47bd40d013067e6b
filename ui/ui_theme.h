#pragma once

#include <QString>

namespace cw::ui {

// "system" follows the desktop's colours (dark when the system palette is dark), "light"
// and "dark" force one. Uses the Fusion style so both look the same on every desktop.
void applyUiTheme(const QString& theme);
bool isDarkTheme();

} // namespace cw::ui
