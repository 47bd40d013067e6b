#include "engine/generation/end_of_turn.h"

#include "engine/runtime/model.h"
#include "engine/tokenizer/tokenizer.h"

#include <algorithm>

namespace cw::engine {

std::vector<std::int32_t> endOfTurnIds(const Tokenizer& tokenizer, const Model& model)
{
    std::vector<std::int32_t> ids;
    const auto& special = tokenizer.specialIds();
    for (const auto& id :
        { special.eos, special.imEnd, special.endOfText, model.description().tokenizer.eosId })
        if (id && std::find(ids.begin(), ids.end(), *id) == ids.end())
            ids.push_back(*id);
    return ids;
}

} // namespace cw::engine
