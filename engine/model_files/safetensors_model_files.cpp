#include "engine/model_files/safetensors_model_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace cw::engine {

namespace fs = std::filesystem;

namespace {

Result<nlohmann::json> readJsonFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError(path + ": cannot open");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    auto json = nlohmann::json::parse(buffer.str(), nullptr, false);
    if (json.is_discarded())
        return makeError(path + ": not well-formed JSON");
    return json;
}

bool isPlainFileName(const std::string& name)
{
    return !name.empty() && name.find('/') == std::string::npos
        && name.find('\\') == std::string::npos && name != "." && name != "..";
}

} // namespace

Result<void> SafetensorsModelFiles::add(std::shared_ptr<SafetensorsFile> file)
{
    const std::size_t index = m_files.size();
    for (const auto& tensor : file->tensors()) {
        const auto [it, inserted] = m_tensors.emplace(tensor.name, &tensor);
        if (!inserted)
            return makeError(file->path() + ": tensor \"" + tensor.name + "\" is also in "
                + m_files[m_fileOfTensor[tensor.name]]->path());
        m_fileOfTensor.emplace(tensor.name, index);
    }
    m_files.push_back(std::move(file));
    return {};
}

Result<SafetensorsModelFiles> SafetensorsModelFiles::openFile(const std::string& path)
{
    auto file = SafetensorsFile::open(path);
    if (!file)
        return file.error();
    SafetensorsModelFiles files;
    if (auto added = files.add(std::make_shared<SafetensorsFile>(std::move(file.value()))); !added)
        return added.error();
    return files;
}

Result<SafetensorsModelFiles> SafetensorsModelFiles::openFolder(const std::string& folder)
{
    const fs::path dir(folder);
    const fs::path indexPath = dir / "model.safetensors.index.json";
    std::error_code ec;
    SafetensorsModelFiles files;

    if (fs::is_regular_file(indexPath, ec)) {
        auto json = readJsonFile(indexPath.string());
        if (!json)
            return json.error();
        const auto weightMap = json->find("weight_map");
        if (!json->is_object() || weightMap == json->end() || !weightMap->is_object())
            return makeError(indexPath.string() + ": has no \"weight_map\" object");
        std::map<std::string, std::vector<std::string>> tensorsOfShard;
        for (const auto& [tensorName, shard] : weightMap->items()) {
            if (!shard.is_string() || !isPlainFileName(shard.get<std::string>()))
                return makeError(indexPath.string() + ": weight_map entry \"" + tensorName
                    + "\" does not name a file of this folder");
            tensorsOfShard[shard.get<std::string>()].push_back(tensorName);
        }
        for (const auto& [shard, names] : tensorsOfShard) {
            const fs::path shardPath = dir / shard;
            if (!fs::exists(shardPath, ec))
                return makeError(indexPath.string() + ": shard " + shard
                    + " is missing (it should hold " + std::to_string(names.size())
                    + " tensors, e.g. \"" + names.front() + "\")");
            auto file = SafetensorsFile::open(shardPath.string());
            if (!file)
                return file.error();
            auto shared = std::make_shared<SafetensorsFile>(std::move(file.value()));
            for (const auto& name : names) {
                if (!shared->find(name))
                    return makeError(shardPath.string() + ": does not hold tensor \"" + name
                        + "\" that " + indexPath.filename().string() + " assigns to it");
            }
            if (auto added = files.add(std::move(shared)); !added)
                return added.error();
        }
        return files;
    }

    const fs::path single = dir / "model.safetensors";
    if (fs::is_regular_file(single, ec))
        return openFile(single.string());

    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (entry.is_regular_file() && entry.path().extension() == ".safetensors")
            found.push_back(entry.path().string());
    }
    if (ec)
        return makeError(folder + ": cannot list the folder: " + ec.message());
    if (found.empty())
        return makeError(folder
            + ": no model.safetensors, model.safetensors.index.json or "
              "other *.safetensors file");
    std::sort(found.begin(), found.end());
    for (const auto& path : found) {
        auto file = SafetensorsFile::open(path);
        if (!file)
            return file.error();
        if (auto added = files.add(std::make_shared<SafetensorsFile>(std::move(file.value())));
            !added)
            return added.error();
    }
    return files;
}

const SafetensorsTensor* SafetensorsModelFiles::find(std::string_view name) const
{
    const auto it = m_tensors.find(name);
    return it == m_tensors.end() ? nullptr : it->second;
}

std::string SafetensorsModelFiles::fileOf(std::string_view name) const
{
    const auto it = m_fileOfTensor.find(name);
    return it == m_fileOfTensor.end() ? std::string() : m_files[it->second]->path();
}

std::vector<std::string> SafetensorsModelFiles::filePaths() const
{
    std::vector<std::string> paths;
    for (const auto& file : m_files)
        paths.push_back(file->path());
    return paths;
}

std::vector<std::shared_ptr<const void>> SafetensorsModelFiles::mappings() const
{
    std::vector<std::shared_ptr<const void>> result;
    for (const auto& file : m_files) {
        // Keep the file object itself alive: the tensors' data pointers point into its map.
        result.push_back(file->mapping());
        result.push_back(std::static_pointer_cast<const void>(file));
    }
    return result;
}

} // namespace cw::engine
