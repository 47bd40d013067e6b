#pragma once

// A folder per model file for what the engine learns about it across runs (the routing
// counts the GPU's expert cache is ranked by): $XDG_CACHE_HOME/clausewright/models/ (or
// ~/.cache/...), one folder named by the file's name and a hash of its absolute path and size,
// so a replaced file of the same name starts afresh.

#include <string>

namespace cw::engine {

// The folder, created; "" where there is no home or it cannot be made (nothing is kept then).
std::string modelCacheFolder(const std::string& modelPath);

} // namespace cw::engine
