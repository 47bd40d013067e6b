// libFuzzer target: parseCodeSkill on any bytes either refuses them with a message naming the
// file, or gives a skill whose templates render (with code full of braces) and whose output
// parser reads any answer without crashing.
#include "app/code_skills/code_skill.h"
#include "app/code_skills/skill_output.h"
#include "app/code_skills/skill_prompt.h"

#include <QByteArray>
#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char*>(data), qsizetype(size));
    auto skill = cw::parseCodeSkill(bytes, QStringLiteral("fuzz.yaml"));
    if (!skill) {
        if (skill.error().message.rfind("fuzz.yaml: ", 0) != 0)
            __builtin_trap();
        return 0;
    }
    cw::SkillRequest request;
    request.code = QString::fromUtf8(bytes.left(256)) + QStringLiteral("{code}{{}}{#x}");
    request.language = skill->languages.value(0);
    request.fileName = QStringLiteral("m.py");
    request.errors = QStringLiteral("E");
    request.repair = size % 2 == 0;
    const cw::SkillMessages messages = cw::renderSkillMessages(*skill, request);
    // Without sections, {code} always lands in the prompt whole (never scanned again).
    const QString& user = request.repair && !skill->repairTemplate.isEmpty() ? skill->repairTemplate
                                                                             : skill->userTemplate;
    if (!user.contains(QStringLiteral("{#")) && user.contains(QStringLiteral("{code}"))
        && !messages.user.contains(request.code.trimmed()))
        __builtin_trap();
    (void)cw::parseSkillOutput(*skill, QString::fromUtf8(bytes));
    return 0;
}
