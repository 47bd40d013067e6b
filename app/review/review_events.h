#pragma once

#include "app/review/review_types.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <functional>

namespace cw {

enum class ReviewStage;

// One question the language model is asked, as the UI shows it: the categories it decides
// and the clauses it looks at.
struct ModelQuestionInfo {
    int id = 0;
    QStringList categories;
    QList<int> clauseIndexes;
};

// What a running review reports besides its result, on the review's own thread. Any may be
// empty. The model's part streams: its questions, the pieces of each question's note as they
// are written, and each question's findings as soon as it is answered.
struct ReviewEvents {
    std::function<void(ReviewStage stage, int done, int total)> progress;
    // The review of the fast heads with the playbook applied, before the model starts;
    // only sent when a model review follows.
    std::function<void(const Review& review)> fastReviewReady;
    std::function<void(const QList<ModelQuestionInfo>& questions)> modelQuestions;
    std::function<void(int questionId, const QString& piece)> modelNote;
    std::function<void(int questionId, const QList<Finding>& findings)> modelFindings;
    // Which backend answers the model's questions ("in-process: model.gguf", "remote server:
    // http://..."), and why an earlier one in the fallback order was passed over.
    std::function<void(const QString& backend, const QString& passedOver)> modelBackend;
};

} // namespace cw
