#pragma once

#include "app/generation/text_generator.h"
#include "app/test_generation/skill_model.h"

#include <memory>

namespace cw {

// Skills answered by a generation backend of the review's kind (a remote OpenAI-compatible
// server, through RemoteGenerator): the skill's messages sent as a chat, its sampling,
// stop sequences and (for JSON skills) its schema as the request's response_format. The
// server renders the chat template and shares prefixes itself.
class GeneratorSkillModel : public SkillModel {
public:
    explicit GeneratorSkillModel(std::unique_ptr<generation::TextGenerator> generator);

    QString name() const override;
    Result<SkillModelAnswer> answer(const CodeSkill& skill, const SkillMessages& messages,
        const std::function<void(const QString& piece)>& onText,
        const std::function<bool()>& cancelled) override;
    const generation::TextGenerator& generator() const { return *m_generator; }

private:
    std::unique_ptr<generation::TextGenerator> m_generator;
};

} // namespace cw
