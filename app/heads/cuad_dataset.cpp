#include "app/heads/cuad_dataset.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <lzma.h>

namespace cw::heads {

const QStringList& cuadCategories()
{
    static const QStringList names = { "Document Name", "Parties", "Agreement Date",
        "Effective Date", "Expiration Date", "Renewal Term", "Notice Period To Terminate Renewal",
        "Governing Law", "Most Favored Nation", "Competitive Restriction Exception", "Non-Compete",
        "Exclusivity", "No-Solicit Of Customers", "No-Solicit Of Employees", "Non-Disparagement",
        "Termination For Convenience", "Rofr/Rofo/Rofn", "Change Of Control", "Anti-Assignment",
        "Revenue/Profit Sharing", "Price Restrictions", "Minimum Commitment", "Volume Restriction",
        "Ip Ownership Assignment", "Joint Ip Ownership", "License Grant",
        "Non-Transferable License", "Affiliate License-Licensor", "Affiliate License-Licensee",
        "Unlimited/All-You-Can-Eat-License", "Irrevocable Or Perpetual License",
        "Source Code Escrow", "Post-Termination Services", "Audit Rights", "Uncapped Liability",
        "Cap On Liability", "Liquidated Damages", "Warranty Duration", "Insurance",
        "Covenant Not To Sue", "Third Party Beneficiary" };
    return names;
}

Result<QByteArray> decompressXz(const QByteArray& bytes, const QString& name)
{
    lzma_stream stream = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&stream, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
        return makeError(name.toStdString() + ": cannot start the xz decoder");
    QByteArray out;
    QByteArray buffer(1 << 20, Qt::Uninitialized);
    stream.next_in = reinterpret_cast<const uint8_t*>(bytes.constData());
    stream.avail_in = size_t(bytes.size());
    lzma_ret ret = LZMA_OK;
    while (ret == LZMA_OK) {
        stream.next_out = reinterpret_cast<uint8_t*>(buffer.data());
        stream.avail_out = size_t(buffer.size());
        ret = lzma_code(&stream, LZMA_FINISH);
        out.append(buffer.constData(), buffer.size() - qsizetype(stream.avail_out));
        if (out.size() > (qsizetype(1) << 31)) {
            lzma_end(&stream);
            return makeError(name.toStdString() + ": decompressed data larger than 2 GiB");
        }
    }
    lzma_end(&stream);
    if (ret != LZMA_STREAM_END)
        return makeError(name.toStdString() + ": not a valid xz file (lzma error "
            + std::to_string(int(ret)) + ")");
    return out;
}

namespace {

// Python str indices (code points) to QString (UTF-16) indices.
QList<qsizetype> codePointToUtf16(const QString& text)
{
    QList<qsizetype> map;
    map.reserve(text.size() + 1);
    for (qsizetype i = 0; i < text.size(); ++i) {
        if (text.at(i).isLowSurrogate() && i > 0 && text.at(i - 1).isHighSurrogate())
            continue;
        map.append(i);
    }
    map.append(text.size());
    return map;
}

Result<LabelledContract> parseRecord(const QByteArray& line, const QString& where)
{
    QJsonParseError error;
    const QJsonDocument json = QJsonDocument::fromJson(line, &error);
    if (json.isNull() || !json.isObject())
        return makeError(where.toStdString() + ": not a JSON object ("
            + error.errorString().toStdString() + ")");
    const QJsonObject object = json.object();
    LabelledContract contract;
    contract.id = object.value("id").toString();
    contract.text = object.value("text").toString();
    if (contract.text.isEmpty())
        return makeError(where.toStdString() + ": field 'text' is missing or empty");
    const QJsonObject labels = object.value("labels").toObject();
    const QJsonObject offsets = object.value("span_offsets").toObject();
    const QJsonObject answers = object.value("answers").toObject();
    const QList<qsizetype> map = codePointToUtf16(contract.text);
    const qsizetype points = map.size() - 1;
    for (const QString& category : cuadCategories()) {
        if (!labels.value(category).toArray().isEmpty())
            contract.present.append(category);
        contract.answers.insert(category, answers.value(category).toString());
        for (const QJsonValue& span : offsets.value(category).toArray()) {
            for (const QJsonValue& piece : span.toArray()) {
                const QJsonArray pair = piece.toArray();
                if (pair.size() != 2)
                    continue;
                const qsizetype start = qsizetype(pair.at(0).toDouble(-1));
                const qsizetype end = qsizetype(pair.at(1).toDouble(-1));
                if (start < 0 || end <= start || end > points)
                    return makeError(where.toStdString() + ": span_offsets of '"
                        + category.toStdString() + "' out of range");
                contract.spans[category].append({ map[start], map[end] });
            }
        }
    }
    return contract;
}

} // namespace

Result<QList<LabelledContract>> readLabelledContracts(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return makeError(
            path.toStdString() + ": cannot open (" + file.errorString().toStdString() + ")");
    QByteArray bytes = file.readAll();
    if (path.endsWith(".xz", Qt::CaseInsensitive)
        || bytes.startsWith("\xFD"
                            "7zXZ")) {
        auto decoded = decompressXz(bytes, path);
        if (!decoded)
            return decoded.error();
        bytes = std::move(decoded.value());
    }
    QList<LabelledContract> contracts;
    int lineNumber = 0;
    qsizetype from = 0;
    while (from < bytes.size()) {
        qsizetype to = bytes.indexOf('\n', from);
        if (to < 0)
            to = bytes.size();
        ++lineNumber;
        const QByteArray line = bytes.mid(from, to - from).trimmed();
        from = to + 1;
        if (line.isEmpty())
            continue;
        auto record = parseRecord(line, path + ":" + QString::number(lineNumber));
        if (!record)
            return record.error();
        contracts.append(std::move(record.value()));
    }
    if (contracts.isEmpty())
        return makeError(path.toStdString() + ": no contracts in the file");
    return contracts;
}

Result<QList<LabelledContract>> readLabelledContracts(const std::vector<std::string>& paths)
{
    QList<LabelledContract> all;
    for (const std::string& path : paths) {
        auto contracts = readLabelledContracts(QString::fromStdString(path));
        if (!contracts)
            return contracts.error();
        all.append(*contracts);
    }
    return all;
}

} // namespace cw::heads
