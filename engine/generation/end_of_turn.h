#pragma once

#include <cstdint>
#include <vector>

namespace cw::engine {

class Model;
class Tokenizer;

// The ids that end an answer: the tokenizer's eos, <|im_end|> and <|endoftext|>, and the
// model file's eos, each once.
std::vector<std::int32_t> endOfTurnIds(const Tokenizer& tokenizer, const Model& model);

} // namespace cw::engine
