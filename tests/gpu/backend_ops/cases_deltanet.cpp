// The Gated DeltaNet core (kernels/cuda/deltanet/gated_delta_net.h) against the CPU reference
// of engine/models/layers.cpp (tests/gpu/deltanet/delta_net_problem.h): the recurrent rule of
// decode steps (one token per sequence) and the chunked WY form of prefill (64-token chunks:
// lengths 2, 63, 64, 65, 511, 647 ...), at key/value head dims 16..256, 1..4 key heads with
// value heads tiled and grouped, conv kernels 2..8, and decode after prefill on the states
// prefill left.
#include "tests/gpu/backend_ops/backend_ops.h"
#include "tests/gpu/deltanet/delta_net_problem.h"

#include <string>

namespace cw::backend_ops {
namespace {

using kernels::cuda::DeltaNetShape;

DeltaNetShape shapeOf(int nK, int nV, int dk, int dv, bool tiled, int kernel = 4)
{
    DeltaNetShape s;
    s.keyHeads = nK;
    s.valueHeads = nV;
    s.keyDim = dk;
    s.valueDim = dv;
    s.convKernel = kernel;
    s.valueHeadsTiled = tiled;
    s.eps = 1e-6f;
    return s;
}

std::string shapeText(const DeltaNetShape& s)
{
    return "nK " + std::to_string(s.keyHeads) + " nV " + std::to_string(s.valueHeads) + " dk "
        + std::to_string(s.keyDim) + " dv " + std::to_string(s.valueDim) + " conv "
        + std::to_string(s.convKernel) + (s.valueHeadsTiled ? " tiled" : " grouped");
}

std::string lengthsText(const std::vector<int>& lengths)
{
    std::string s;
    for (int n : lengths) {
        if (!s.empty())
            s += ",";
        s += std::to_string(n);
    }
    return "lengths " + s;
}

// One step's outputs and states against the CPU's from the same states. The core after the
// chunked rule: 1e-4 relative (tests/gpu/deltanet), the gates 1e-6.
void compareStep(CaseContext& ctx, const std::string& step, const cw::test::DeltaNetStepResult& got,
    const cw::test::DeltaNetStepResult& want, const DeltaNetShape& shape)
{
    const std::int64_t width = std::int64_t(shape.valueHeads) * shape.valueDim;
    ctx.check(step + "core", got.core, want.core, { 1e-3, 1e-4 }, rowsOf(width, "row", "value"));
    ctx.check(step + "g", got.g, want.g, { 1e-5, 1e-6 }, rowsOf(shape.valueHeads, "row", "head"));
    ctx.check(step + "beta", got.beta, want.beta, { 1e-5, 1e-6 },
        rowsOf(shape.valueHeads, "row", "head"));
    ctx.check(step + "conv state", got.convState, want.convState, { 1e-5, 1e-6 });
    ctx.check(step + "recurrent state", got.recurrentState, want.recurrentState, { 1e-3, 1e-4 },
        rowsOf(std::int64_t(shape.valueHeads) * shape.keyDim * shape.valueDim, "slot", "value"));
}

// `steps` run one after another on the same states (prefill, then decode on what it left).
void runDeltaNet(CaseContext& ctx, const DeltaNetShape& shape,
    const std::vector<std::vector<int>>& steps, std::uint32_t seed,
    const kernels::cuda::deltanet::Tuning* tuning = nullptr)
{
    constexpr int kSlots = 8;
    cw::test::DeltaNetLayerData layer = cw::test::randomLayer(shape, kSlots, seed);
    cw::test::DeviceDeltaNet device(layer);
    for (std::size_t i = 0; i < steps.size(); ++i) {
        // Slots scattered over the pool, never in order.
        std::vector<int> slots;
        for (std::size_t s = 0; s < steps[i].size(); ++s)
            slots.push_back(int((s * 5 + 3) % kSlots));
        const cw::test::DeltaNetStepData step
            = cw::test::randomStep(shape, steps[i], slots, seed + 17 * std::uint32_t(i + 1));
        cw::test::DeltaNetStepResult got;
        const cudaError_t ran = device.run(step, &got, tuning);
        if (ran == cudaErrorNotSupported && tuning) {
            cudaGetLastError();
            ctx.skip("this column slice does not fit the card's shared memory (refused, "
                     "cudaErrorNotSupported; the default slice does)");
            return;
        }
        BO_CUDA_OK(ran);
        const cw::test::DeltaNetStepResult want = cw::test::cpuStep(layer, step);
        compareStep(
            ctx, steps.size() > 1 ? "step " + std::to_string(i + 1) + " " : "", got, want, shape);
        if (i + 1 == steps.size()) {
            BO_CUDA_OK(device.upload(step));
            const double stateBytes
                = 8.0 * double(steps[i].size()) * shape.valueHeads * shape.keyDim * shape.valueDim;
            const double rowBytes = 4.0 * double(step.rows())
                * double(shape.convDim() + 2 * shape.valueHeads * (1 + shape.valueDim));
            ctx.measure(stateBytes + rowBytes, [&](cudaStream_t s) {
                return device.enqueue(s, tuning ? *tuning : kernels::cuda::deltanet::Tuning {});
            });
        }
    }
}

} // namespace

void addDeltaNetCases(CaseTable& table)
{
    std::vector<DeltaNetShape> shapes;
    for (const bool tiled : { true, false }) {
        shapes.push_back(shapeOf(1, 1, 16, 16, tiled));
        shapes.push_back(shapeOf(2, 4, 16, 16, tiled));
        shapes.push_back(shapeOf(1, 4, 16, 32, tiled));
        shapes.push_back(shapeOf(2, 2, 32, 32, tiled));
        shapes.push_back(shapeOf(1, 2, 32, 64, tiled));
        shapes.push_back(shapeOf(2, 4, 48, 80, tiled));
        shapes.push_back(shapeOf(4, 8, 64, 64, tiled));
        shapes.push_back(shapeOf(2, 4, 128, 128, tiled));
        shapes.push_back(shapeOf(1, 2, 256, 256, tiled));
    }
    shapes.push_back(shapeOf(2, 4, 32, 32, true, 2));
    shapes.push_back(shapeOf(2, 4, 32, 32, true, 8));
    const std::vector<std::pair<std::string, std::vector<std::vector<int>>>> steps {
        { "recurrent", { { 1 } } },
        { "recurrent", { { 1, 1, 1, 1, 1 } } },
        { "chunk", { { 2 } } },
        { "chunk", { { 63 } } },
        { "chunk", { { 64 } } },
        { "chunk", { { 65 } } },
        { "chunk", { { 511 } } },
        { "chunk", { { 647 } } },
        { "chunk", { { 1, 2, 63, 64, 65, 130 } } },
        { "chunk then recurrent", { { 647, 65 }, { 1, 1 }, { 1, 1 } } },
        { "chunk after chunk", { { 70, 3 }, { 129, 64 } } },
    };
    std::uint32_t seed = 1;
    for (const DeltaNetShape& shape : shapes)
        for (const auto& [kind, list] : steps) {
            std::string text;
            for (const auto& s : list) {
                if (!text.empty())
                    text += " then ";
                text += lengthsText(s);
            }
            const bool quick = (shape.keyDim == 32 && shape.valueDim == 64)
                || (shape.keyDim == 16 && shape.valueDim == 32 && shape.valueHeadsTiled);
            const bool expensive = shape.keyDim * shape.valueDim * shape.valueHeads > 65536;
            const bool longStep
                = kind == "chunk then recurrent" || text.find("647") != std::string::npos;
            const std::uint32_t s = seed++;
            table.add("gatedDeltaNet (" + kind + ")", shapeText(shape) + " " + text,
                quick && !(expensive && longStep),
                [shape, list, s](CaseContext& ctx) { runDeltaNet(ctx, shape, list, s); });
        }
    // The kernels' column slices (16 or 32 state columns per block) and the prefill
    // recurrence plain or double-buffered (delta_net_kernels.h's Tuning).
    for (const DeltaNetShape& shape : { shapeOf(2, 4, 64, 64, true), shapeOf(2, 4, 128, 128, true),
             shapeOf(1, 2, 32, 64, false), shapeOf(1, 2, 256, 256, true) })
        for (const int columns : { 16, 32 })
            for (const int pipeline : { 0, 1 }) {
                kernels::cuda::deltanet::Tuning tuning;
                tuning.decodeColumns = columns;
                tuning.chunkColumns = columns;
                tuning.chunkPipeline = pipeline;
                const std::uint32_t s = seed++;
                table.add("gatedDeltaNetTuned",
                    shapeText(shape) + " columns " + std::to_string(columns)
                        + (pipeline ? " double-buffered" : " plain") + " lengths 130,7 then 1,1",
                    shape.keyDim == 64 && columns == 16, [shape, tuning, s](CaseContext& ctx) {
                        runDeltaNet(ctx, shape, { { 130, 7 }, { 1, 1 } }, s, &tuning);
                    });
            }
}

} // namespace cw::backend_ops
