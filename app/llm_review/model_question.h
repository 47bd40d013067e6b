#pragma once

#include "app/llm_review/category_questions.h"
#include "app/review/review_types.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>

namespace cw::llm {

// A stretch of the contract shown to the model under a number ("[3]"): a clause's own text,
// or a window of it around a fast finding. Every question's prompt lists the same passages,
// so they form the prefix all questions of a contract share.
struct Passage {
    int id = 0; // 1-based, as the prompt numbers it
    qsizetype start = 0;
    qsizetype end = 0;
    int clauseIndex = -1;
    int page = 0;
    QString label; // "Section 12 Governing Law"; empty when the clause has none
};

// One question to the model: a group of related categories and the passages to look at.
struct ModelQuestion {
    int id = 0; // index in the plan
    QString groupId;
    QList<CategoryQuestion> categories;
    QList<int> passageIds; // candidates, best first
    bool fromKeywords = false; // the fast head found none; passages come from a keyword search
    // Categories whose answer may propose replacement wording for a risky clause: those the
    // playbook has no wording of its own for (markWordingCategories).
    QStringList wordingCategories;

    QStringList categoryNames() const;
};

struct QuestionPlan {
    QList<Passage> passages;
    QList<ModelQuestion> questions;

    const Passage* passage(int id) const;
};

// The model's verdict on one category of a question.
struct CategoryVerdict {
    QString category;
    bool present = false;
    QList<int> passageIds;
    Risk risk = Risk::None;
    QJsonObject fields;
    QString suggestedText; // the replacement wording proposed; empty when none was asked or given
};

// The parsed answer to one question.
struct QuestionAnswer {
    int questionId = 0;
    bool answered = false; // false: cancelled, cut off, or did not parse (see error)
    QString note; // the model's rationale
    QList<CategoryVerdict> verdicts;
    QString error;
    int generatedTokens = 0;
    QString text; // the answer as the model wrote it
};

} // namespace cw::llm
