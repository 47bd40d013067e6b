#include "app/llm_review/model_review.h"

#include "app/llm_review/question_prompt.h"
#include "app/llm_review/streaming_note_reader.h"
#include "engine/generation/batch_generator.h"
#include "engine/sampling/grammar_constraint.h"

#include <QElapsedTimer>
#include <algorithm>

namespace cw::llm {

namespace {

// Tokens an answer needs at least besides its prompt: the note and a verdict per category.
constexpr std::int64_t kMinAnswerTokens = 256;

struct RenderedPlan {
    QuestionPlan plan;
    std::vector<std::vector<std::int32_t>> prompts;
    std::int64_t longest = 0;
};

Result<RenderedPlan> render(LlmSession& session, const Document& document,
    const QList<Clause>& clauses, const QList<Finding>& fastFindings, const Playbook& playbook,
    const PlanLimits& limits)
{
    RenderedPlan out;
    out.plan = planQuestions(document, clauses, fastFindings, limits);
    for (const ModelQuestion& q : out.plan.questions) {
        auto text = questionPrompt(session.chatTemplate(), document, out.plan, q, playbook);
        if (!text)
            return text.error();
        out.prompts.push_back(session.tokenizer().encode(*text));
        out.longest = std::max(out.longest, std::int64_t(out.prompts.back().size()));
    }
    return out;
}

// Smaller passages first, then fewer of them; false when nothing is left to take away.
bool shrink(PlanLimits& limits)
{
    if (limits.passageChars > 200) {
        limits.passageChars = std::max(200, limits.passageChars * 2 / 3);
        return true;
    }
    if (limits.passagesPerQuestion > 1) {
        --limits.passagesPerQuestion;
        limits.passagesPerCategory
            = std::min(limits.passagesPerCategory, limits.passagesPerQuestion);
        limits.keywordPassages = std::min(limits.keywordPassages, limits.passagesPerQuestion);
        return true;
    }
    return false;
}

} // namespace

QList<Finding> findingsFromAnswer(const Document& document, const QuestionPlan& plan,
    const QuestionAnswer& answer, const QList<Finding>& fastFindings)
{
    QList<Finding> out;
    for (const CategoryVerdict& v : answer.verdicts) {
        if (!v.present)
            continue;
        for (int id : v.passageIds) {
            const Passage* p = plan.passage(id);
            if (!p)
                continue;
            const Finding* fast = nullptr;
            for (const Finding& f : fastFindings) {
                if (f.category == v.category && f.start < p->end && f.end > p->start
                    && (!fast || f.confidence > fast->confidence))
                    fast = &f;
            }
            Finding f;
            f.category = v.category;
            f.start = fast ? fast->start : p->start;
            f.end = fast ? fast->end : p->end;
            f.clauseIndex = fast ? fast->clauseIndex : p->clauseIndex;
            f.page = document.pageAt(f.start);
            f.text = document.text.mid(f.start, f.end - f.start);
            f.fields = v.fields;
            // Where the fast head agrees the finding is well supported; alone, the model's
            // word is a lead to check.
            f.confidence = fast ? std::max(0.9, fast->confidence) : 0.6;
            f.risk = v.risk;
            f.rationale = answer.note;
            f.source = QStringLiteral("llm");
            out.append(f);
        }
    }
    return out;
}

Result<ModelReviewResult> runModelReview(LlmSession& session, const Document& document,
    const QList<Clause>& clauses, const QList<Finding>& fastFindings, const Playbook& playbook,
    const std::function<bool()>& cancelled, const ModelReviewObserver& observer,
    const ModelReviewOptions& options)
{
    auto lock = session.lock();
    QElapsedTimer timer;
    timer.start();
    const std::int64_t context = session.contextLength();
    PlanLimits limits = options.limits;
    Result<RenderedPlan> rendered = Error {};
    while (true) {
        rendered = render(session, document, clauses, fastFindings, playbook, limits);
        if (!rendered)
            return rendered.error();
        if (context <= 0 || rendered->longest + kMinAnswerTokens <= context)
            break;
        if (!shrink(limits))
            return makeError("the contract's passages do not fit in the model's context of "
                + std::to_string(context) + " tokens (a question needs "
                + std::to_string(rendered->longest) + " tokens and room for its answer)");
    }
    ModelReviewResult result;
    result.plan = std::move(rendered->plan);
    const QuestionPlan& plan = result.plan;
    const int total = int(plan.questions.size());
    if (observer.planned)
        observer.planned(plan);
    if (observer.progress)
        observer.progress(0, total);
    if (total == 0) {
        result.seconds = double(timer.elapsed()) / 1000.0;
        return result;
    }

    std::vector<sampling::GrammarConstraint> constraints;
    constraints.reserve(std::size_t(total));
    for (const ModelQuestion& q : plan.questions) {
        auto gbnf = answerGrammar(q);
        if (!gbnf)
            return gbnf.error();
        auto constraint = sampling::GrammarConstraint::fromGbnf(*gbnf, session.vocabulary());
        if (!constraint)
            return makeError("answer grammar of question " + std::to_string(q.id) + ": "
                + constraint.error().message);
        constraints.push_back(std::move(*constraint));
    }
    const auto count = std::size_t(total);
    std::vector<StreamingNoteReader> readers(count, StreamingNoteReader(kNoteField));
    std::vector<engine::BatchRequest> requests(count);
    for (int i = 0; i < total; ++i) {
        engine::BatchRequest& r = requests[std::size_t(i)];
        r.prompt = std::move(rendered->prompts[std::size_t(i)]);
        r.params.temperature = options.temperature;
        r.params.seed = options.seed + std::uint64_t(i);
        const std::int64_t room = context > 0 ? context - std::int64_t(r.prompt.size()) : 1 << 30;
        r.params.maxTokens = std::int32_t(std::min<std::int64_t>(options.maxAnswerTokens, room));
        r.constraint = &constraints[std::size_t(i)];
        const int questionId = plan.questions[i].id;
        r.onText = [&readers, &observer, i, questionId](std::string_view piece) {
            const std::string note = readers[std::size_t(i)].feed(piece);
            if (!note.empty() && observer.notePiece)
                observer.notePiece(questionId, QString::fromStdString(note));
            return true;
        };
    }

    QList<QuestionAnswer> answers;
    for (const ModelQuestion& q : plan.questions) {
        QuestionAnswer a;
        a.questionId = q.id;
        a.error = QStringLiteral("not answered");
        answers.append(a);
    }
    int done = 0;
    engine::BatchOptions batchOptions;
    batchOptions.cancelled = cancelled;
    batchOptions.onFinished = [&](std::size_t index, const engine::GenerationResult& generated) {
        const ModelQuestion& q = plan.questions[qsizetype(index)];
        QuestionAnswer& answer = answers[qsizetype(index)];
        answer.generatedTokens = int(generated.ids.size());
        answer.text = QString::fromStdString(generated.text);
        auto parsed = parseAnswer(q, generated.text);
        if (parsed) {
            parsed->generatedTokens = answer.generatedTokens;
            parsed->text = answer.text;
            answer = std::move(*parsed);
            const QList<Finding> found = findingsFromAnswer(document, plan, answer, fastFindings);
            result.findings.append(found);
            if (observer.answered)
                observer.answered(answer, found);
        } else {
            answer.error = QString::fromStdString(parsed.error().message);
            result.warnings.append(QStringLiteral("model question on %1: %2")
                                       .arg(q.categoryNames().join(", "), answer.error));
        }
        ++done;
        if (observer.progress)
            observer.progress(done, total);
    };
    auto batch = engine::generateBatch(session.model(), session.tokenizer(),
        std::span<engine::BatchRequest>(requests), batchOptions);
    if (!batch)
        return makeError("model review: " + batch.error().message);
    result.answers = answers;
    result.cancelled = batch->cancelled;
    result.promptTokens = batch->promptTokens;
    result.sharedPrefixTokens = batch->sharedPrefixTokens;
    result.generatedTokens = batch->generatedTokens;
    result.seconds = double(timer.elapsed()) / 1000.0;
    return result;
}

} // namespace cw::llm
