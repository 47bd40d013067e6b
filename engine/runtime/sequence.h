#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cw::engine {

class Model;

// The state of one token stream on a Model: its tokens, the KV blocks of its attention
// layers (in the model's shared pool) and the slot of its DeltaNet layers' conv and recurrent
// states (held by the model's backend). Created by Model::newSequence or Model::fork; it must
// not outlive the model. After a failed Model::step the sequences of that step are in an
// undefined state and should be dropped.
class Sequence {
public:
    ~Sequence();
    Sequence(const Sequence&) = delete;
    Sequence& operator=(const Sequence&) = delete;

    std::int64_t length() const { return std::int64_t(m_tokens.size()); }
    const std::vector<std::int32_t>& tokens() const { return m_tokens; }
    const std::vector<int>& kvBlocks() const { return m_blocks; }
    // Why the sequence has no recurrent-state slot (its next step will fail); empty: it has
    // one, or the model needs none.
    const std::string& stateError() const { return m_stateError; }

private:
    friend class Model;
    explicit Sequence(Model& model);

    Model* m_model;
    std::vector<std::int32_t> m_tokens;
    std::vector<int> m_blocks; // block i holds positions [i*blockTokens, (i+1)*blockTokens)
    int m_stateSlot = -1; // the backend's recurrent-state slot (-1: none)
    std::string m_stateError; // why no slot could be taken (reported by the next step)
};

} // namespace cw::engine
