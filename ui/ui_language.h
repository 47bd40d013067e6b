#pragma once

#include <QString>

namespace cw::ui {

// Installs the translator for `language` ("en", "zh_CN"; empty: the system's locale) into
// the application, replacing the previous one. English needs none and always succeeds.
bool installUiLanguage(const QString& language);

} // namespace cw::ui
