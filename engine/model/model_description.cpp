#include "engine/model/model_description.h"

#include <cassert>
#include <stdexcept>

namespace cw::engine {

const std::byte* TensorView::slice(std::int64_t i) const
{
    if (!slices.empty()) {
        assert(i >= 0 && std::size_t(i) < slices.size());
        return slices[std::size_t(i)];
    }
    const std::int64_t outer = ne[std::size_t(nDims > 0 ? nDims - 1 : 0)];
    assert(i >= 0 && i < outer);
    return data + bytes / std::uint64_t(outer) * std::uint64_t(i);
}

const TensorView* ModelDescription::find(const std::string& tensorName) const
{
    const auto it = tensors.find(tensorName);
    return it == tensors.end() ? nullptr : &it->second;
}

const TensorView& ModelDescription::get(const std::string& tensorName) const
{
    const auto* view = find(tensorName);
    if (!view)
        throw std::out_of_range("model has no tensor " + tensorName);
    return *view;
}

} // namespace cw::engine
