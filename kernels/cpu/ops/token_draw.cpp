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

TokenCuts::TokenCuts(const float* logits, std::int64_t n, const TokenDraw& draw)
    : m_logits(logits)
    , m_n(n)
    , m_draw(draw)
    , m_top(-kInf)
    , m_cut(-FLT_MAX)
{
    for (std::int64_t i = 0; i < n; ++i) {
        if (!usable(logits[i]))
            continue;
        ++m_usable;
        if (m_best < 0 || value(logits[i]) > m_top) {
            m_top = value(logits[i]);
            m_best = i;
        }
    }
    if (m_best < 0 || !drawsAToken(draw) || m_usable == 1)
        return;
    // Every cut keeps the tokens whose value is at least m_cut.
    if (draw.topK > 0 && draw.topK < m_usable) {
        std::vector<float> values;
        values.reserve(std::size_t(m_usable));
        for (std::int64_t i = 0; i < n; ++i)
            if (usable(logits[i]))
                values.push_back(value(logits[i]));
        std::nth_element(
            values.begin(), values.begin() + (draw.topK - 1), values.end(), std::greater<float>());
        m_cut = values[std::size_t(draw.topK - 1)];
    }
    if (draw.topP < 1.0f) {
        std::vector<float> kept;
        double total = 0.0;
        const float invT = 1.0f / draw.temperature;
        auto w = [&](float v) { return double(std::exp((v - m_top) * invT)); };
        for (std::int64_t i = 0; i < n; ++i)
            if (usable(logits[i]) && value(logits[i]) >= m_cut) {
                kept.push_back(value(logits[i]));
                total += w(kept.back());
            }
        // The smallest best-first prefix whose mass reaches topP: sorted as far as it reaches.
        const double need = double(draw.topP) * total;
        double mass = 0.0;
        std::size_t sorted = 0, want = std::min<std::size_t>(64, kept.size());
        for (bool found = false; !found && sorted < kept.size();) {
            std::partial_sort(kept.begin() + std::ptrdiff_t(sorted),
                kept.begin() + std::ptrdiff_t(want), kept.end(), std::greater<float>());
            for (std::size_t i = sorted; i < want && !found; ++i) {
                mass += w(kept[i]);
                found = mass >= need || i + 1 == kept.size();
                m_cut = kept[i];
            }
            sorted = want;
            want = std::min(kept.size(), want * 8);
        }
    }
}

double TokenCuts::rawWeight(float l) const
{
    return double(std::exp((value(l) - m_top) * (1.0f / m_draw.temperature)));
}

bool TokenCuts::kept(std::int64_t i) const
{
    const float l = m_logits[i];
    if (!usable(l))
        return false;
    if (!drawsAToken(m_draw) || m_usable == 1)
        return i == m_best;
    return value(l) >= m_cut && (m_draw.minP <= 0.0f || rawWeight(l) >= double(m_draw.minP));
}

double TokenCuts::weight(std::int64_t i) const
{
    if (!kept(i))
        return 0.0;
    return !drawsAToken(m_draw) || m_usable == 1 ? 1.0 : rawWeight(m_logits[i]);
}

TokenCuts::Span TokenCuts::spanOf(std::int64_t id) const
{
    double before = 0.0, mine = 0.0, total = 0.0;
    for (std::int64_t i = 0; i < m_n; ++i)
        if (kept(i)) {
            const double w = weight(i);
            total += w;
            if (i < id)
                before += w;
            else if (i == id)
                mine = w;
        }
    return total > 0.0 ? Span { before / total, (before + mine) / total } : Span {};
}

std::int32_t drawToken(const float* logits, std::int64_t n, const TokenDraw& draw)
{
    const TokenCuts cuts(logits, n, draw);
    if (cuts.best() < 0 || !drawsAToken(draw))
        return cuts.best();
    double total = 0.0;
    std::int64_t last = cuts.best();
    for (std::int64_t i = 0; i < n; ++i)
        if (cuts.kept(i)) {
            total += cuts.weight(i);
            last = i;
        }
    const double target = double(draw.u) * total;
    double cum = 0.0;
    for (std::int64_t i = 0; i < n; ++i)
        if (cuts.kept(i)) {
            cum += cuts.weight(i);
            if (target < cum)
                return std::int32_t(i);
        }
    return std::int32_t(last);
}

} // namespace cw::kernels::ops
