#include "app/heads/clause_model.h"

#include "app/heads/category_relations.h"

#include <QDataStream>
#include <QFile>
#include <QSaveFile>
#include <cmath>

namespace cw::heads {

namespace {
constexpr quint32 kMagic = 0x4D435743; // "CWCM"
constexpr quint32 kFormatVersion = 5;
constexpr quint32 kMaxPresenceWeights = 512;
constexpr quint32 kOldestFormat = 2; // no calibration
constexpr quint32 kMaxCategories = 256;
} // namespace

ClauseModel::ClauseModel(uint32_t hashBits, QList<CategoryModel> categories)
    : m_hashBits(hashBits)
    , m_categories(std::move(categories))
{
    for (CategoryModel& c : m_categories) {
        c.qualified.clear();
        for (const QString& name : qualifiedCategories(c.category)) {
            if (const int column = categoryIndex(name); column >= 0)
                c.qualified.push_back(column);
        }
    }
    buildIndex();
}

int ClauseModel::categoryIndex(const QString& name) const
{
    for (int i = 0; i < m_categories.size(); ++i) {
        if (m_categories[i].category == name)
            return i;
    }
    return -1;
}

void ClauseModel::buildIndex()
{
    const size_t size = size_t(1) << m_hashBits;
    m_offsets.assign(size + 1, 0);
    for (const CategoryModel& c : m_categories) {
        for (uint32_t f : c.indices)
            ++m_offsets[f + 1];
    }
    for (size_t f = 0; f < size; ++f)
        m_offsets[f + 1] += m_offsets[f];
    m_entryCategory.assign(m_offsets[size], 0);
    m_entryWeight.assign(m_offsets[size], 0.0f);
    std::vector<uint32_t> fill(m_offsets.begin(), m_offsets.end() - 1);
    for (int k = 0; k < m_categories.size(); ++k) {
        const CategoryModel& c = m_categories[k];
        for (size_t j = 0; j < c.indices.size(); ++j) {
            const uint32_t slot = fill[c.indices[j]]++;
            m_entryCategory[slot] = uint16_t(k);
            m_entryWeight[slot] = c.weights[j];
        }
    }
}

void ClauseModel::score(const FeatureVector& features, std::vector<float>& out) const
{
    out.assign(size_t(m_categories.size()), 0.0f);
    for (uint32_t f : features.indices) {
        if (f + 1 >= m_offsets.size())
            continue;
        for (uint32_t e = m_offsets[f]; e < m_offsets[f + 1]; ++e)
            out[m_entryCategory[e]] += m_entryWeight[e];
    }
    for (int k = 0; k < m_categories.size(); ++k) {
        const float z = m_categories[k].bias + out[size_t(k)] * features.value;
        out[size_t(k)] = 1.0f / (1.0f + std::exp(-z));
    }
}

QByteArray ClauseModel::serialize() const
{
    QByteArray bytes;
    QDataStream out(&bytes, QIODevice::WriteOnly);
    out.setByteOrder(QDataStream::LittleEndian);
    out.setFloatingPointPrecision(QDataStream::SinglePrecision);
    out << kMagic << kFormatVersion << quint32(kFeatureVersion) << quint32(m_hashBits)
        << quint32(m_categories.size());
    for (const CategoryModel& c : m_categories) {
        out << c.category.toUtf8() << c.bias << c.presenceThreshold << c.cueThreshold
            << c.spanThreshold << quint8(c.calibration.has_value())
            << (c.calibration ? c.calibration->slope : 0.0f)
            << (c.calibration ? c.calibration->intercept : 0.0f) << quint8(c.presence.has_value())
            << (c.presence ? c.presence->bias : 0.0f)
            << quint32(c.presence ? c.presence->weights.size() : 0);
        if (c.presence) {
            for (float w : c.presence->weights)
                out << w;
        }
        out << quint32(c.indices.size());
        for (size_t j = 0; j < c.indices.size(); ++j)
            out << quint32(c.indices[j]) << c.weights[j];
    }
    return bytes;
}

Result<ClauseModel> ClauseModel::deserialize(const QByteArray& bytes, const QString& name)
{
    const std::string where = name.toStdString();
    QDataStream in(bytes);
    in.setByteOrder(QDataStream::LittleEndian);
    in.setFloatingPointPrecision(QDataStream::SinglePrecision);
    quint32 magic = 0, format = 0, features = 0, bits = 0, count = 0;
    in >> magic >> format >> features >> bits >> count;
    if (in.status() != QDataStream::Ok || magic != kMagic)
        return makeError(where + ": not a clause model file (bad magic)");
    if (format < kOldestFormat || format > kFormatVersion)
        return makeError(where + ": model format " + std::to_string(format) + ", expected "
            + std::to_string(kOldestFormat) + " to " + std::to_string(kFormatVersion));
    if (features != kFeatureVersion)
        return makeError(where + ": model trained with feature version " + std::to_string(features)
            + ", this build uses " + std::to_string(kFeatureVersion)
            + " (retrain with train-heads)");
    if (bits < 10 || bits > 24)
        return makeError(where + ": hash size 2^" + std::to_string(bits) + " out of range");
    if (count == 0 || count > kMaxCategories)
        return makeError(where + ": category count " + std::to_string(count) + " out of range");
    QList<CategoryModel> categories;
    for (quint32 k = 0; k < count; ++k) {
        CategoryModel c;
        QByteArray nameBytes;
        quint32 nnz = 0;
        in >> nameBytes >> c.bias >> c.presenceThreshold >> c.cueThreshold >> c.spanThreshold;
        if (format >= 3) {
            quint8 calibrated = 0;
            PlattCalibration calibration;
            in >> calibrated >> calibration.slope >> calibration.intercept;
            if (calibrated > 1 || !std::isfinite(calibration.slope)
                || !std::isfinite(calibration.intercept))
                return makeError(where + ": bad calibration in category " + std::to_string(k));
            if (calibrated)
                c.calibration = calibration;
        }
        if (format >= 4) {
            quint8 hasPresence = 0;
            PresenceModel presence;
            in >> hasPresence >> presence.bias;
            // Format 4 always held the category's own six weights; format 5 says how many.
            quint32 count = 6; // format 4: the first six features of presence_model.h
            if (format >= 5)
                in >> count;
            if (count > kMaxPresenceWeights)
                return makeError(where + ": presence model of category " + std::to_string(k)
                    + " claims " + std::to_string(count) + " weights");
            presence.weights.resize(count);
            bool finite = std::isfinite(presence.bias);
            for (float& w : presence.weights) {
                in >> w;
                finite = finite && std::isfinite(w);
            }
            if (hasPresence > 1 || !finite)
                return makeError(where + ": bad presence model in category " + std::to_string(k));
            if (hasPresence)
                c.presence = presence;
        }
        in >> nnz;
        if (in.status() != QDataStream::Ok)
            return makeError(where + ": truncated in category " + std::to_string(k));
        const qint64 left = bytes.size() - in.device()->pos();
        if (qint64(nnz) * 8 > left)
            return makeError(where + ": category " + std::to_string(k) + " claims "
                + std::to_string(nnz) + " weights but the file is shorter");
        c.category = QString::fromUtf8(nameBytes);
        c.indices.resize(nnz);
        c.weights.resize(nnz);
        for (quint32 j = 0; j < nnz; ++j) {
            quint32 index = 0;
            in >> index >> c.weights[j];
            if (index >= (1u << bits))
                return makeError(
                    where + ": feature index out of range in '" + c.category.toStdString() + "'");
            c.indices[j] = index;
        }
        if (in.status() != QDataStream::Ok)
            return makeError(where + ": truncated in '" + c.category.toStdString() + "'");
        categories.append(std::move(c));
    }
    return ClauseModel(bits, std::move(categories));
}

Result<void> ClauseModel::save(const QString& path) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return makeError(
            path.toStdString() + ": cannot write (" + file.errorString().toStdString() + ")");
    file.write(serialize());
    if (!file.commit())
        return makeError(
            path.toStdString() + ": cannot write (" + file.errorString().toStdString() + ")");
    return {};
}

Result<ClauseModel> ClauseModel::load(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return makeError(path.toStdString() + ": cannot open the clause model ("
            + file.errorString().toStdString() + ")");
    if (file.size() > qint64(64) * 1024 * 1024)
        return makeError(path.toStdString() + ": clause model larger than 64 MiB");
    return deserialize(file.readAll(), path);
}

} // namespace cw::heads
