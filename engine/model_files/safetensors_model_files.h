#pragma once

#include "engine/common/result.h"
#include "engine/model_files/safetensors_file.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cw::engine {

// All the safetensors files of one Hugging Face model: a single `model.safetensors`, or the
// shards named by `model.safetensors.index.json` (every shard must exist and hold the
// tensors the index assigns to it), each memory-mapped.
class SafetensorsModelFiles {
public:
    // `folder` holds model.safetensors.index.json, model.safetensors, or other *.safetensors
    // files (all of them are opened, in name order).
    static Result<SafetensorsModelFiles> openFolder(const std::string& folder);
    // One file; no index.
    static Result<SafetensorsModelFiles> openFile(const std::string& path);

    const SafetensorsTensor* find(std::string_view name) const;
    // Every tensor name, sorted; with the file that holds it.
    const std::map<std::string, const SafetensorsTensor*, std::less<>>& tensors() const
    {
        return m_tensors;
    }
    std::string fileOf(std::string_view name) const;
    std::vector<std::string> filePaths() const;
    // Mappings to keep alive while views point into them.
    std::vector<std::shared_ptr<const void>> mappings() const;

private:
    Result<void> add(std::shared_ptr<SafetensorsFile> file);

    std::vector<std::shared_ptr<SafetensorsFile>> m_files;
    std::map<std::string, const SafetensorsTensor*, std::less<>> m_tensors;
    std::map<std::string, std::size_t, std::less<>> m_fileOfTensor;
};

} // namespace cw::engine
