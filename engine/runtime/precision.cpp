#include "engine/runtime/precision.h"

#include <string>

namespace cw::engine {

Result<void> applyPrecision(ModelOptions& options, std::string_view name)
{
    if (name != "f32" && name != "tf32" && name != "bf16")
        return makeError("precision '" + std::string(name) + "' is not one of "
            + std::string(kPrecisionChoices));
    options.gpuPrecision = std::string(name);
    // 8-bit activations are a speed/precision trade of the same kind as bf16: only bf16 takes it.
    options.integerProducts = name == "bf16";
    return {};
}

} // namespace cw::engine
