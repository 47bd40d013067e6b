#include "engine/model_files/tensor_names.h"

namespace cw::engine::gguf {

std::string archKey(std::string_view arch, std::string_view suffix)
{
    std::string key(arch);
    key += '.';
    key += suffix;
    return key;
}

std::string tensorName(std::string_view base, std::string_view suffix)
{
    std::string name(base);
    if (!suffix.empty()) {
        name += '.';
        name += suffix;
    }
    return name;
}

std::string blockTensorName(long long layer, std::string_view base, std::string_view suffix)
{
    return "blk." + std::to_string(layer) + "." + tensorName(base, suffix);
}

} // namespace cw::engine::gguf
