#include "app/ingest/page_layout.h"

#include <algorithm>
#include <vector>

namespace cw::ingest {

namespace {

struct Gutter {
    double left = 0.0;
    double right = 0.0;
};

// A vertical band in the middle of the page that no word crosses, with substantial text on
// both sides over an overlapping height: the gap between two text columns.
bool findGutter(const QList<LaidWord>& words, const QSizeF& pageSize, Gutter& gutter)
{
    const double width = pageSize.width();
    if (width <= 0.0 || words.size() < 20)
        return false;
    const int buckets = int(width);
    std::vector<int> coverage(std::size_t(buckets) + 1, 0);
    for (const LaidWord& word : words) {
        const int from = std::clamp(int(word.box.left()), 0, buckets);
        const int to = std::clamp(int(word.box.right()), 0, buckets);
        for (int x = from; x <= to; ++x)
            ++coverage[std::size_t(x)];
    }
    // Widest empty band whose middle lies in the central half of the page.
    int bestFrom = -1;
    int bestWidth = 0;
    int runFrom = -1;
    for (int x = 0; x <= buckets; ++x) {
        const bool empty = coverage[std::size_t(x)] == 0;
        if (empty && runFrom < 0)
            runFrom = x;
        if ((!empty || x == buckets) && runFrom >= 0) {
            const int runTo = empty ? x + 1 : x;
            const double middle = (runFrom + runTo) / 2.0;
            if (runTo - runFrom > bestWidth && middle > width * 0.3 && middle < width * 0.7) {
                bestWidth = runTo - runFrom;
                bestFrom = runFrom;
            }
            runFrom = -1;
        }
    }
    if (bestFrom < 0 || bestWidth < 8)
        return false;
    gutter = { double(bestFrom), double(bestFrom + bestWidth) };
    int leftCount = 0;
    int rightCount = 0;
    double leftTop = 1e9, leftBottom = -1e9, rightTop = 1e9, rightBottom = -1e9;
    for (const LaidWord& word : words) {
        if (word.box.right() <= gutter.left) {
            ++leftCount;
            leftTop = std::min(leftTop, word.box.top());
            leftBottom = std::max(leftBottom, word.box.bottom());
        } else {
            ++rightCount;
            rightTop = std::min(rightTop, word.box.top());
            rightBottom = std::max(rightBottom, word.box.bottom());
        }
    }
    const int total = leftCount + rightCount;
    if (leftCount < total / 5 || rightCount < total / 5)
        return false;
    const double overlap = std::min(leftBottom, rightBottom) - std::max(leftTop, rightTop);
    const double shorter = std::min(leftBottom - leftTop, rightBottom - rightTop);
    return shorter > pageSize.height() * 0.25 && overlap > shorter * 0.5;
}

double median(std::vector<double> values)
{
    if (values.empty())
        return 0.0;
    const auto middle = values.begin() + std::ptrdiff_t(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    return *middle;
}

struct Group {
    std::vector<int> words; // indices into the page's words
    double top = 0.0;
    double bottom = 0.0;
};

LayoutLine joinLine(const QList<LaidWord>& words, std::vector<int>& members, int column)
{
    std::sort(members.begin(), members.end(),
        [&](int a, int b) { return words[a].box.left() < words[b].box.left(); });
    LayoutLine line;
    line.column = column;
    std::vector<double> heights;
    int previous = -1;
    for (int index : members) {
        const LaidWord& word = words[index];
        if (previous >= 0) {
            const LaidWord& before = words[previous];
            bool space = true;
            if (index == previous + 1 && word.continuesRun)
                space = before.spaceAfter;
            else
                space = word.box.left() - before.box.right() > 0.1 * word.box.height();
            if (space)
                line.text += QLatin1Char(' ');
        }
        line.text += word.text;
        line.box = line.box.isNull() ? word.box : line.box.united(word.box);
        heights.push_back(word.box.height());
        previous = index;
    }
    line.fontSize = median(std::move(heights));
    return line;
}

QList<LayoutLine> linesOfColumn(const QList<LaidWord>& words, std::vector<int> indices, int column)
{
    std::sort(indices.begin(), indices.end(), [&](int a, int b) {
        const double ca = words[a].box.center().y();
        const double cb = words[b].box.center().y();
        return ca != cb ? ca < cb : words[a].box.left() < words[b].box.left();
    });
    std::vector<Group> groups;
    for (int index : indices) {
        const QRectF& box = words[index].box;
        bool joined = false;
        // A word joins one of the last few lines it overlaps vertically by half its height.
        for (auto it = groups.rbegin(); it != groups.rend() && it - groups.rbegin() < 3; ++it) {
            const double overlap
                = std::min(it->bottom, box.bottom()) - std::max(it->top, box.top());
            const double smaller = std::min(it->bottom - it->top, box.height());
            if (overlap >= 0.5 * smaller && smaller > 0.0) {
                it->words.push_back(index);
                it->top = std::min(it->top, box.top());
                it->bottom = std::max(it->bottom, box.bottom());
                joined = true;
                break;
            }
        }
        if (!joined)
            groups.push_back(Group { { index }, box.top(), box.bottom() });
    }
    QList<LayoutLine> lines;
    lines.reserve(qsizetype(groups.size()));
    for (Group& group : groups)
        lines.append(joinLine(words, group.words, column));
    std::stable_sort(lines.begin(), lines.end(),
        [](const LayoutLine& a, const LayoutLine& b) { return a.box.top() < b.box.top(); });
    return lines;
}

} // namespace

QList<LayoutLine> layoutLines(const QList<LaidWord>& words, const QSizeF& pageSize)
{
    std::vector<int> left;
    std::vector<int> right;
    Gutter gutter;
    const bool twoColumns = findGutter(words, pageSize, gutter);
    for (int i = 0; i < int(words.size()); ++i) {
        if (words[i].text.trimmed().isEmpty())
            continue;
        if (twoColumns && words[i].box.left() >= gutter.right - 1.0)
            right.push_back(i);
        else
            left.push_back(i);
    }
    QList<LayoutLine> lines = linesOfColumn(words, std::move(left), 0);
    if (twoColumns)
        lines.append(linesOfColumn(words, std::move(right), 1));
    return lines;
}

} // namespace cw::ingest
