#pragma once

#include "app/llm_review/model_question.h"
#include "app/playbook/playbook.h"
#include "engine/chat/chat_template.h"
#include "engine/common/result.h"

#include <string>
#include <vector>

namespace cw::llm {

// The answer's note field and its longest length: the note comes first in every answer, so
// it streams to the reader before the verdicts, and it is bounded so an answer always ends.
inline constexpr const char* kNoteField = "rationale";
inline constexpr int kNoteMaxChars = 240;
// The longest replacement wording an answer may propose (about 80 tokens).
inline constexpr int kSuggestedTextMaxChars = 320;

// Sets each question's wordingCategories: its categories for which no playbook rule has
// preferred or fallback wording, so the model proposes wording only where the firm has none.
void markWordingCategories(QuestionPlan& plan, const Playbook& playbook);

// The conversation of one question: a system message, then a user message that starts with
// the contract's passages (the same text for every question, so the questions share that
// prefix) and ends with the question, the categories' meanings, the playbook's positions on
// them and the answer format. Rendering it with a chat template, and the answer's grammar,
// are the host engine's (prompt_rendering.h).
std::vector<engine::ChatMessage> questionMessages(const Document& document,
    const QuestionPlan& plan, const ModelQuestion& question, const Playbook& playbook);

// The JSON schema of the answer to `question`:
//   {"rationale": string (1..240 chars),
//    "answers": {"<category>": {"present": bool, "clause_ids": [passage ids of the question],
//                               "risk": "low"|"medium"|"high", "fields": {...},
//                               "suggested_text": string (optional, wordingCategories only)},
//                ...}}
// clause_ids may only name the question's candidate passages.
std::string answerSchema(const ModelQuestion& question);

// Reads the model's answer; errors say what is missing (an answer cut off by the token
// limit does not parse).
Result<QuestionAnswer> parseAnswer(const ModelQuestion& question, const std::string& text);

} // namespace cw::llm
