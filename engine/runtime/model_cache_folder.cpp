#include "engine/runtime/model_cache_folder.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>

namespace cw::engine {

std::string modelCacheFolder(const std::string& modelPath)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path base;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        base = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = fs::path(home) / ".cache";
    else
        return "";
    const fs::path model = fs::absolute(modelPath, ec);
    if (ec)
        return "";
    const auto size = fs::is_regular_file(model, ec) ? fs::file_size(model, ec) : 0;
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016zx",
        std::hash<std::string> {}(model.string() + "|" + std::to_string(size)));
    std::string stem = model.filename().string();
    if (stem.empty())
        stem = model.parent_path().filename().string(); // an HF folder given with a slash
    const fs::path folder = base / "clausewright" / "models" / (stem + "-" + hash);
    fs::create_directories(folder, ec);
    return ec ? "" : folder.string();
}

} // namespace cw::engine
