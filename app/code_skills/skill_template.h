#pragma once

#include "engine/common/result.h"

#include <QMap>
#include <QString>

namespace cw {

// The values a skill's templates are filled with, by placeholder name.
using SkillValues = QMap<QString, QString>;

// Checks a template: every {name} is a known placeholder, every {#name} section is closed by
// {/name}, no brace is left unpaired ("{{" and "}}" are literal braces).
Result<void> checkSkillTemplate(const QString& text);

// Fills a checked template. Values are inserted as they are (never scanned again, so code
// full of braces stays intact); a missing value is empty; a section {#name}...{/name} is
// kept only when `name` has a non-empty value.
QString renderSkillTemplate(const QString& text, const SkillValues& values);

} // namespace cw
