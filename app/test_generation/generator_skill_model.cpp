#include "app/test_generation/generator_skill_model.h"

namespace cw {

GeneratorSkillModel::GeneratorSkillModel(std::unique_ptr<generation::TextGenerator> generator)
    : m_generator(std::move(generator))
{
}

QString GeneratorSkillModel::name() const
{
    return m_generator->kindName() + QStringLiteral(": ") + m_generator->name();
}

Result<SkillModelAnswer> GeneratorSkillModel::answer(const CodeSkill& skill,
    const SkillMessages& messages, const std::function<void(const QString& piece)>& onText,
    const std::function<bool()>& cancelled)
{
    generation::GenerationRequest request;
    if (!messages.system.isEmpty())
        request.messages.push_back({ "system", messages.system.toStdString(), std::nullopt });
    request.messages.push_back({ "user", messages.user.toStdString(), std::nullopt });
    if (skill.output == SkillOutputKind::Json)
        request.jsonSchema = skill.jsonSchema.toStdString();
    request.maxTokens = skill.sampling.maxTokens;
    request.temperature = skill.sampling.temperature;
    request.topP = skill.sampling.topP;
    for (const QString& stop : skill.stopSequences)
        request.stop.push_back(stop.toStdString());
    if (onText)
        request.onText = [onText](std::string_view piece) {
            onText(QString::fromUtf8(piece.data(), qsizetype(piece.size())));
        };
    generation::GenerationAnswer answer;
    auto totals = m_generator->generate(std::span<generation::GenerationRequest>(&request, 1),
        cancelled, [&answer](std::size_t, const generation::GenerationAnswer& a) { answer = a; });
    if (!totals)
        return totals.error();
    if (!answer.error.empty())
        return makeError(name().toStdString() + ": " + answer.error);
    SkillModelAnswer out;
    out.text = QString::fromStdString(answer.text);
    out.cancelled = answer.cancelled || totals->cancelled;
    out.promptTokens = answer.promptTokens;
    out.generatedTokens = answer.generatedTokens;
    return out;
}

} // namespace cw
