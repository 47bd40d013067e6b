#include "engine/generation/constraint_vocabulary.h"

#include "engine/generation/end_of_turn.h"
#include "engine/runtime/model.h"
#include "engine/tokenizer/tokenizer.h"

namespace cw::engine {

Result<std::shared_ptr<const sampling::TokenVocabulary>> constraintVocabulary(
    const Tokenizer& tokenizer, const Model& model)
{
    std::vector<std::string> tokens(std::size_t(tokenizer.vocabSize()));
    std::vector<std::int32_t> special;
    for (std::int32_t id = 0; id < tokenizer.vocabSize(); ++id) {
        tokens[std::size_t(id)] = std::string(tokenizer.tokenBytes(id));
        if (tokenizer.isSpecial(id) || tokenizer.isAdded(id))
            special.push_back(id);
    }
    std::vector<std::int32_t> eos;
    for (std::int32_t id : endOfTurnIds(tokenizer, model)) {
        // An EOS id beyond the tokenizer's vocabulary (model padding) cannot be sampled as
        // text anyway; the vocabulary only knows the ids the tokenizer has.
        if (id >= 0 && id < tokenizer.vocabSize())
            eos.push_back(id);
    }
    if (eos.empty())
        return makeError("the tokenizer has no end-of-turn token (eos, <|im_end|> or "
                         "<|endoftext|>): constrained answers could never end");
    auto vocabulary
        = sampling::TokenVocabulary::create(std::move(tokens), std::move(special), std::move(eos));
    if (!vocabulary)
        return vocabulary.error();
    return std::make_shared<const sampling::TokenVocabulary>(std::move(*vocabulary));
}

} // namespace cw::engine
