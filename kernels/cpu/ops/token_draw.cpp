#include "kernels/cpu/ops/token_draw.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace cw::kernels::ops {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

float value(float l)
{
    return l == kInf ? FLT_MAX : l;
}

bool usable(float l)
{
    return l > -kInf; // false for NaN too
}

} // namespace

std::int32_t drawToken(const float* logits, std::int64_t n, const TokenDraw& draw)
{
    std::int64_t best = -1, usableCount = 0;
    float top = -kInf;
    for (std::int64_t i = 0; i < n; ++i) {
        if (!usable(logits[i]))
            continue;
        ++usableCount;
        if (best < 0 || value(logits[i]) > top) {
            top = value(logits[i]);
            best = i;
        }
    }
    if (best < 0 || !drawsAToken(draw) || usableCount == 1)
        return std::int32_t(best);
    const float invT = 1.0f / draw.temperature;
    auto weight = [&](float v) { return std::exp((v - top) * invT); };
    // Every cut keeps the tokens whose value is at least `cut`.
    float cut = -FLT_MAX;
    if (draw.topK > 0 && draw.topK < usableCount) {
        std::vector<float> values;
        values.reserve(std::size_t(usableCount));
        for (std::int64_t i = 0; i < n; ++i)
            if (usable(logits[i]))
                values.push_back(value(logits[i]));
        std::nth_element(
            values.begin(), values.begin() + (draw.topK - 1), values.end(), std::greater<float>());
        cut = values[std::size_t(draw.topK - 1)];
    }
    if (draw.topP < 1.0f) {
        std::vector<float> kept;
        double total = 0.0;
        for (std::int64_t i = 0; i < n; ++i)
            if (usable(logits[i]) && value(logits[i]) >= cut) {
                kept.push_back(value(logits[i]));
                total += double(weight(kept.back()));
            }
        // The smallest best-first prefix whose mass reaches topP: sorted as far as it reaches.
        const double need = double(draw.topP) * total;
        double mass = 0.0;
        std::size_t sorted = 0, want = std::min<std::size_t>(64, kept.size());
        for (bool found = false; !found && sorted < kept.size();) {
            std::partial_sort(kept.begin() + std::ptrdiff_t(sorted),
                kept.begin() + std::ptrdiff_t(want), kept.end(), std::greater<float>());
            for (std::size_t i = sorted; i < want && !found; ++i) {
                mass += double(weight(kept[i]));
                found = mass >= need || i + 1 == kept.size();
                cut = kept[i];
            }
            sorted = want;
            want = std::min(kept.size(), want * 8);
        }
    }
    auto kept = [&](std::int64_t i) {
        return usable(logits[i]) && value(logits[i]) >= cut
            && (draw.minP <= 0.0f || weight(value(logits[i])) >= draw.minP);
    };
    double total = 0.0;
    std::int64_t last = best;
    for (std::int64_t i = 0; i < n; ++i)
        if (kept(i)) {
            total += double(weight(value(logits[i])));
            last = i;
        }
    const double target = double(draw.u) * total;
    double cum = 0.0;
    for (std::int64_t i = 0; i < n; ++i)
        if (kept(i)) {
            cum += double(weight(value(logits[i])));
            if (target < cum)
                return std::int32_t(i);
        }
    return std::int32_t(last);
}

} // namespace cw::kernels::ops
