#pragma once

#include <QString>

namespace cw {

// The bundled sample contract (CUAD v1): <prefix>/share/clausewright/samples in an installed
// or unpacked tree, else the source tree's resources/samples; empty where neither exists.
QString sampleContractPath();

} // namespace cw
