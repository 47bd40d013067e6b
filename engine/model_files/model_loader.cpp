#include "engine/model_files/model_loader.h"

#include "engine/model_files/gguf_model_loader.h"
#include "engine/model_files/hf_model_loader.h"

#include <filesystem>
#include <fstream>

namespace cw::engine {

namespace fs = std::filesystem;

Result<ModelDescription> openModel(const std::string& path)
{
    std::error_code ec;
    if (fs::is_directory(path, ec))
        return openHuggingFaceModel(path);
    if (!fs::is_regular_file(path, ec))
        return makeError(path + ": no such file or folder");
    char magic[4] = {};
    std::ifstream in(path, std::ios::binary);
    in.read(magic, 4);
    if (in.gcount() == 4 && magic[0] == 'G' && magic[1] == 'G' && magic[2] == 'U'
        && magic[3] == 'F')
        return openGgufModel(path);
    if (fs::path(path).extension() == ".safetensors")
        return openHuggingFaceSafetensors(path);
    if (fs::path(path).filename() == "config.json")
        return openHuggingFaceModel(fs::path(path).parent_path().string());
    return makeError(path
        + ": neither a GGUF file (no GGUF magic), a .safetensors file nor a "
          "Hugging Face model folder");
}

} // namespace cw::engine
