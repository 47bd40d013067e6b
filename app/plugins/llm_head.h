#pragma once

// What the host lends a head of kind "llm" for one run (HeadRunContext::llm): the language
// model, already loaded in process or connected on a server, behind generation::TextGenerator,
// so a head plugin never loads or links an engine of its own. Part of the Head SDK.

#include "app/generation/text_generator.h"
#include "app/playbook/playbook.h"
#include "app/plugins/clause_head.h"
#include "app/review/review_events.h"

#include <QList>
#include <QStringList>
#include <cstdint>
#include <functional>
#include <string>

namespace cw {

// The layout of LlmHeadInput and LlmHeadReport. A head compares input.version with the value it
// was compiled with and refuses another (the host of another version would hand it another
// struct). Bump on any change to either.
inline constexpr int kLlmHeadInputVersion = 1;

// What an llm head reports about its run, for the review's settings and warnings.
struct LlmHeadReport {
    int questions = 0;
    int answered = 0;
    int passages = 0;
    std::int64_t promptTokens = 0;
    std::int64_t sharedPrefixTokens = 0;
    std::int64_t generatedTokens = 0;
    bool cancelled = false;
    QStringList warnings; // questions whose answer could not be used
};

struct LlmHeadInput {
    int version = kLlmHeadInputVersion;
    generation::TextGenerator* generator = nullptr; // never null in a run the host starts
    QList<Finding> fastFindings; // what the fast heads found, the questions are planned from
    const Playbook* playbook = nullptr; // the firm's positions, for the questions
    // Heads "all": the fast findings come back merged with the model's (the model's judgement
    // where both looked); heads "llm": the model's findings alone.
    bool mergeWithFast = true;
    // The host engine's grammar for a JSON Schema (GBNF), tighter than the one the in-process
    // generator would derive itself; empty: let the generator derive it.
    std::function<Result<std::string>(const std::string& jsonSchema)> grammarForSchema;
    // Streaming to the UI, called on the review's thread as the model writes.
    std::function<void(const QList<ModelQuestionInfo>& questions)> planned;
    std::function<void(int questionId, const QString& piece)> notePiece;
    std::function<void(int questionId, const QList<Finding>& findings)> answered;
    LlmHeadReport* report = nullptr; // filled by the head when set
};

} // namespace cw
