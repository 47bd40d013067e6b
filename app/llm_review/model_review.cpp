#include "app/llm_review/model_review.h"

#include "app/llm_review/question_prompt.h"
#include "app/llm_review/streaming_note_reader.h"

#include <QElapsedTimer>
#include <algorithm>

namespace cw::llm {

namespace {

// Tokens an answer needs at least besides its prompt: the note and a verdict per category.
constexpr std::int64_t kMinAnswerTokens = 256;

struct RenderedPlan {
    QuestionPlan plan;
    std::vector<std::vector<engine::ChatMessage>> conversations;
    std::int64_t longest = 0; // tokens of the longest prompt (0: not counted here)
};

Result<RenderedPlan> render(generation::TextGenerator& generator, const Document& document,
    const QList<Clause>& clauses, const QList<Finding>& fastFindings, const Playbook& playbook,
    const QList<CategoryGroup>& groups, const PlanLimits& limits)
{
    RenderedPlan out;
    out.plan = planQuestions(document, clauses, fastFindings, groups, limits);
    markWordingCategories(out.plan, playbook);
    for (const ModelQuestion& q : out.plan.questions) {
        out.conversations.push_back(questionMessages(document, out.plan, q, playbook));
        auto tokens = generator.promptTokens(out.conversations.back());
        if (!tokens)
            return tokens.error();
        out.longest = std::max(out.longest, *tokens);
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
        bool wordingGiven = false;
        for (int id : v.passageIds) {
            const Passage* p = plan.passage(id);
            if (!p)
                continue;
            const Finding* fast = nullptr;
            for (const Finding& f : fastFindings) {
                if (f.category == v.category && f.start < p->end && f.end > p->start
                    && (!fast || f.score > fast->score))
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
            // The model's answers have no calibration: where the fast head found the same
            // clause its calibrated confidence (if any) carries over; alone, the model's word
            // is a lead to check and shows no confidence.
            if (fast) {
                f.confidence = fast->confidence;
                f.score = fast->score;
            }
            f.risk = v.risk;
            // One proposal for the category: it replaces the first passage named, not each.
            if (v.risk >= Risk::Medium && !v.suggestedText.isEmpty() && !wordingGiven) {
                f.suggestedText = v.suggestedText;
                wordingGiven = true;
            }
            f.rationale = answer.note;
            f.source = QStringLiteral("llm");
            out.append(f);
        }
    }
    return out;
}

namespace {

// One round of questions with the passages `limits` allows (shrunk here until the prompts
// fit a context the generator knows).
Result<ModelReviewResult> askQuestions(generation::TextGenerator& generator,
    const Document& document, const QList<Clause>& clauses, const QList<Finding>& fastFindings,
    const Playbook& playbook, const std::function<bool()>& cancelled,
    const ModelReviewObserver& observer, const ModelReviewOptions& options, PlanLimits& limits)
{
    QElapsedTimer timer;
    timer.start();
    const std::int64_t context = generator.contextLength();
    Result<RenderedPlan> rendered = Error {};
    while (true) {
        rendered
            = render(generator, document, clauses, fastFindings, playbook, options.groups, limits);
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

    const auto count = std::size_t(total);
    std::vector<StreamingNoteReader> readers(count, StreamingNoteReader(kNoteField));
    std::vector<generation::GenerationRequest> requests(count);
    for (int i = 0; i < total; ++i) {
        const ModelQuestion& q = plan.questions[i];
        generation::GenerationRequest& r = requests[std::size_t(i)];
        r.messages = std::move(rendered->conversations[std::size_t(i)]);
        // The in-process engine takes the tighter grammar (no \u escapes); a server the schema.
        r.jsonSchema = answerSchema(q);
        if (options.grammar) {
            auto gbnf = options.grammar(r.jsonSchema);
            if (!gbnf)
                return gbnf.error();
            r.grammar = std::move(*gbnf);
        }
        r.temperature = options.temperature;
        r.seed = options.seed + std::uint64_t(i);
        r.maxTokens = options.maxAnswerTokens;
        const int questionId = q.id;
        r.onText = [&readers, &observer, i, questionId](std::string_view piece) {
            const std::string note = readers[std::size_t(i)].feed(piece);
            if (!note.empty() && observer.notePiece)
                observer.notePiece(questionId, QString::fromStdString(note));
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
    auto onFinished = [&](std::size_t index, const generation::GenerationAnswer& generated) {
        const ModelQuestion& q = plan.questions[qsizetype(index)];
        QuestionAnswer& answer = answers[qsizetype(index)];
        answer.generatedTokens = int(generated.generatedTokens);
        answer.text = QString::fromStdString(generated.text);
        if (generated.cancelled) {
            answer.error = QStringLiteral("cancelled");
        } else if (!generated.error.empty()) {
            answer.error = QString::fromStdString(generated.error);
            result.warnings.append(QStringLiteral("model question on %1: %2")
                                       .arg(q.categoryNames().join(", "), answer.error));
        } else if (auto parsed = parseAnswer(q, generated.text); parsed) {
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
    auto totals = generator.generate(
        std::span<generation::GenerationRequest>(requests), cancelled, onFinished);
    if (!totals)
        return totals.error();
    result.answers = answers;
    result.cancelled = totals->cancelled;
    result.promptTokens = totals->promptTokens;
    result.sharedPrefixTokens = totals->sharedPrefixTokens;
    result.generatedTokens = totals->generatedTokens;
    result.seconds = double(timer.elapsed()) / 1000.0;
    return result;
}

} // namespace

Result<ModelReviewResult> runModelReview(generation::TextGenerator& generator,
    const Document& document, const QList<Clause>& clauses, const QList<Finding>& fastFindings,
    const Playbook& playbook, const std::function<bool()>& cancelled,
    const ModelReviewObserver& observer, const ModelReviewOptions& options)
{
    // A remote server's context is not known here: when it refuses the prompts as too long,
    // the passages are shortened (then fewer) and the questions asked again.
    if (options.groups.isEmpty())
        return makeError("the model has no questions to ask (the LLM head's questions file gave "
                         "no groups)");
    PlanLimits limits = options.limits;
    while (true) {
        auto result = askQuestions(generator, document, clauses, fastFindings, playbook, cancelled,
            observer, options, limits);
        if (!result && generator.lastPromptsTooLong() && shrink(limits))
            continue;
        return result;
    }
}

} // namespace cw::llm
