#pragma once

#include "engine/common/result.h"
#include "engine/sampling/token_vocabulary.h"

#include <memory>

namespace cw::engine {

class Model;
class Tokenizer;

// The vocabulary a GrammarConstraint needs, from a model's tokenizer: the raw bytes of each
// id, every added token (<|im_start|>, <think>, ...) marked special so a grammar never emits
// one as text, and the end-of-turn ids as EOS. Built once per model; shared by the
// constraints of all its sequences.
Result<std::shared_ptr<const sampling::TokenVocabulary>> constraintVocabulary(
    const Tokenizer& tokenizer, const Model& model);

} // namespace cw::engine
