#include "engine/models/model_weights.h"

#include "kernels/cpu/ops/ops.h"
#include "kernels/cpu/quant/dequantize.h"

#include <cmath>
#include <string>

namespace cw::engine {

namespace {

std::string shapeText(const TensorView& v)
{
    std::string s = "[";
    for (int i = 0; i < std::max(v.nDims, 1); ++i)
        s += (i ? ", " : "") + std::to_string(v.ne[std::size_t(i)]);
    return s + "]";
}

Error shapeError(const TensorView& v, const std::string& expected)
{
    return makeError("tensor " + v.name + " has shape " + shapeText(v) + ", expected " + expected);
}

} // namespace

std::string layerTensor(std::int64_t layer, const char* suffix)
{
    return "blk." + std::to_string(layer) + "." + suffix;
}

int ModelWeights::layersOf(LayerKind kind) const
{
    int n = 0;
    for (const auto& layer : layers)
        n += layer.kind == kind ? 1 : 0;
    return n;
}

WeightMatrix ExpertStack::expert(std::int64_t e) const
{
    WeightMatrix m;
    m.type = view->type;
    m.rowStride = std::size_t(*kernels::rowBytes(view->type, std::uint64_t(view->ne[0])));
    m.data = view->slice(e) + m.rowStride * std::size_t(rowOffset);
    m.rows = rows;
    m.cols = cols;
    return m;
}

Result<WeightMatrix> bindMatrix(
    const ModelDescription& model, const std::string& name, std::int64_t cols, std::int64_t rows)
{
    const TensorView* v = model.find(name);
    if (!v)
        return makeError("model has no tensor " + name);
    // A 1-row matrix may be stored as a vector.
    const bool vectorOk = rows == 1 && v->nDims == 1 && v->ne[0] == cols;
    if (!vectorOk && (v->nDims > 2 || v->ne[0] != cols || v->ne[1] != rows))
        return shapeError(*v, "[" + std::to_string(cols) + ", " + std::to_string(rows) + "]");
    const auto stride = kernels::rowBytes(v->type, std::uint64_t(cols));
    if (!stride)
        return makeError("tensor " + name + ": row of " + std::to_string(cols)
            + " values is not a whole number of blocks of its type");
    if (!v->slices.empty())
        return makeError("tensor " + name + " is split in slices; expected one contiguous matrix");
    WeightMatrix m;
    m.type = v->type;
    m.data = v->data;
    m.rowStride = std::size_t(*stride);
    m.rows = rows;
    m.cols = cols;
    return m;
}

Result<ExpertStack> bindExperts(const ModelDescription& model, const std::string& name,
    std::int64_t cols, std::int64_t rows, std::int64_t experts)
{
    const TensorView* v = model.find(name);
    if (!v)
        return makeError("model has no tensor " + name);
    if (v->nDims != 3 || v->ne[0] != cols || v->ne[1] != rows || v->ne[2] != experts)
        return shapeError(*v,
            "[" + std::to_string(cols) + ", " + std::to_string(rows) + ", "
                + std::to_string(experts) + "]");
    if (!kernels::rowBytes(v->type, std::uint64_t(cols)))
        return makeError("tensor " + name + ": rows are not a whole number of blocks");
    if (!v->slices.empty() && std::int64_t(v->slices.size()) != experts)
        return makeError("tensor " + name + " has " + std::to_string(v->slices.size())
            + " expert slices, expected " + std::to_string(experts));
    ExpertStack s;
    s.view = v;
    s.rows = rows;
    s.cols = cols;
    return s;
}

Result<std::vector<float>> readFloats(
    const ModelDescription& model, const std::string& name, std::int64_t count)
{
    const TensorView* v = model.find(name);
    if (!v)
        return makeError("model has no tensor " + name);
    if (v->elements() != count)
        return shapeError(*v, std::to_string(count) + " values");
    const std::int64_t rowLen = v->ne[0];
    const auto stride = kernels::rowBytes(v->type, std::uint64_t(rowLen));
    if (!stride)
        return makeError("tensor " + name + ": rows are not a whole number of blocks");
    std::vector<float> out(static_cast<std::size_t>(count));
    const std::int64_t rows = count / rowLen;
    const std::int64_t outer = v->ne[std::size_t(std::max(v->nDims, 1) - 1)];
    const std::int64_t rowsPerSlice = rows / std::max<std::int64_t>(outer, 1);
    for (std::int64_t r = 0; r < rows; ++r) {
        const std::byte* src = v->slices.empty()
            ? v->data + std::size_t(*stride) * std::size_t(r)
            : v->slice(r / rowsPerSlice) + std::size_t(*stride) * std::size_t(r % rowsPerSlice);
        kernels::quant::dequantizeRow(v->type, src, out.data() + r * rowLen, rowLen);
    }
    return out;
}

Result<std::vector<float>> readNorm(
    const ModelDescription& model, const std::string& name, std::int64_t count, bool zeroCentred)
{
    auto w = readFloats(model, name, count);
    if (!w)
        return w.error();
    if (zeroCentred)
        for (auto& x : *w)
            x += 1.0f;
    return w;
}

Result<void> bindCommon(const ModelDescription& model, bool zeroCentredNorms, ModelWeights& w)
{
    const auto& hp = model.hparams;
    if (hp.vocabSize <= 0 || hp.hiddenSize <= 0 || hp.numLayers <= 0)
        return makeError(
            model.sourcePath + ": vocabulary, hidden size and layer count must be positive");
    w.embedding = model.find("token_embd.weight");
    if (!w.embedding)
        return makeError("model has no tensor token_embd.weight");
    if (w.embedding->ne[0] != hp.hiddenSize || w.embedding->ne[1] != hp.vocabSize)
        return shapeError(*w.embedding,
            "[" + std::to_string(hp.hiddenSize) + ", " + std::to_string(hp.vocabSize) + "]");
    auto norm = readNorm(model, "output_norm.weight", hp.hiddenSize, zeroCentredNorms);
    if (!norm)
        return norm.error();
    w.outputNorm = std::move(*norm);
    const bool hasOutput = model.find("output.weight") != nullptr;
    auto out = bindMatrix(
        model, hasOutput ? "output.weight" : "token_embd.weight", hp.hiddenSize, hp.vocabSize);
    if (!out)
        return out.error();
    w.output = *out;
    if (hp.headDim <= 0 || hp.ropeDim <= 0 || hp.ropeDim > hp.headDim || hp.ropeDim % 2)
        return makeError(model.sourcePath + ": rotary dimensions " + std::to_string(hp.ropeDim)
            + " do not fit head size " + std::to_string(hp.headDim));
    w.ropeInvFreq.resize(std::size_t(hp.ropeDim / 2));
    kernels::ops::ropeInverseFrequencies(hp.ropeTheta, hp.ropeDim, w.ropeInvFreq.data());
    return {};
}

} // namespace cw::engine
