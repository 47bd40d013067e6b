#pragma once

#include "app/heads/presence_model.h"
#include "app/heads/score_calibration.h"
#include "app/heads/text_features.h"
#include "engine/common/result.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <cstdint>
#include <optional>
#include <vector>

namespace cw::heads {

// One category's one-vs-rest logistic regression, pruned to its strongest weights, and the
// thresholds chosen on held-out folds: the contract has the category when its best
// candidate scores at least `presenceThreshold`, or its best candidate holding the
// category's presence cue (presence_cues.h) scores at least `cueThreshold`; then every
// candidate scoring at least `spanThreshold` (and the best one) is a finding. `calibration`
// turns a finding's score into the probability that it is right, fitted on the same held-out
// folds; none where too few held-out findings existed (the finding then has no confidence).
struct CategoryModel {
    QString category;
    float bias = 0.0f;
    float presenceThreshold = 0.5f;
    float cueThreshold = 2.0f; // above 1: the cue plays no part
    float spanThreshold = 0.5f;
    std::optional<PlattCalibration> calibration;
    // When fitted, presence is decided by this model's probability against
    // `presenceThreshold` instead of the best candidate's score (and the cue route is off).
    std::optional<PresenceModel> presence;
    // The columns of the categories this one qualifies (category_relations.h), for its
    // presence model; set by ClauseModel from the names, not stored in the file.
    std::vector<int> qualified;
    std::vector<uint32_t> indices; // sorted
    std::vector<float> weights;
};

// The clause classifier's data file ("CWCM" binary, little-endian): a header with the
// feature version and hash size, then the categories (format 3 adds each category's
// calibration, format 4 its presence model, format 5 the number of that model's
// weights; older files load without them). Scoring uses an
// inverted index so a candidate costs one pass over its features.
class ClauseModel {
public:
    ClauseModel() = default;
    ClauseModel(uint32_t hashBits, QList<CategoryModel> categories);

    uint32_t hashBits() const { return m_hashBits; }
    const QList<CategoryModel>& categories() const { return m_categories; }
    int categoryIndex(const QString& name) const;

    // Probabilities (0..1), one per category, in categories() order.
    void score(const FeatureVector& features, std::vector<float>& out) const;

    QByteArray serialize() const;
    // Checks every count against the bytes left before allocating; errors name `name`.
    static Result<ClauseModel> deserialize(const QByteArray& bytes, const QString& name);
    Result<void> save(const QString& path) const;
    static Result<ClauseModel> load(const QString& path);

private:
    void buildIndex();

    uint32_t m_hashBits = kDefaultHashBits;
    QList<CategoryModel> m_categories;
    // Inverted index: for feature f, entries [m_offsets[f], m_offsets[f+1]).
    std::vector<uint32_t> m_offsets;
    std::vector<uint16_t> m_entryCategory;
    std::vector<float> m_entryWeight;
};

} // namespace cw::heads
