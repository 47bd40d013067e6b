// The CUDA DeltaNet core against the CPU reference: conv + gates, the recurrent (decode) and
// chunked (prefill) delta rule, the gated RMSNorm and the conv and recurrent states they leave.
#include "tests/gpu/deltanet/delta_net_problem.h"

#include <cstdio>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace cw::test {
namespace {

namespace dn = kernels::cuda::deltanet;

constexpr double kCoreTolerance = 1e-4; // relative, against the f32 CPU reference
constexpr double kGateTolerance = 1e-6;

DeltaNetShape shapeOf(int nK, int nV, int dk, int dv, bool tiled)
{
    DeltaNetShape s;
    s.keyHeads = nK;
    s.valueHeads = nV;
    s.keyDim = dk;
    s.valueDim = dv;
    s.convKernel = 4;
    s.valueHeadsTiled = tiled;
    s.eps = 1e-6f;
    return s;
}

std::string describe(const DeltaNetShape& s)
{
    return "nK " + std::to_string(s.keyHeads) + " nV " + std::to_string(s.valueHeads) + " dk "
        + std::to_string(s.keyDim) + " dv " + std::to_string(s.valueDim)
        + (s.valueHeadsTiled ? " tiled" : " grouped");
}

// Shapes of the tiny test models (dk, dv 16/32), the mixes the kernels handle apart (dv not a
// multiple of 32, dk past 128) and Qwen3.6's head (128, specialised), all with nV / nK = 2.
std::vector<DeltaNetShape> shapes(bool tiled)
{
    return { shapeOf(2, 4, 16, 16, tiled), shapeOf(1, 2, 32, 64, tiled),
        shapeOf(2, 4, 64, 32, tiled), shapeOf(2, 4, 48, 80, tiled), shapeOf(2, 4, 128, 128, tiled),
        shapeOf(1, 2, 256, 256, tiled) };
}

// Core, gates and the states of every slot: the step's slots within tolerance of the CPU, the
// others exactly as the device had them before the step (`before`; the CPU's copies of those
// may differ by the rounding of earlier steps).
void expectStepMatches(const DeltaNetLayerData& layer, const DeltaNetStepData& step,
    const DeltaNetStepResult& got, const DeltaNetStepResult& want, const DeltaNetStepResult& before,
    const std::string& what)
{
    const ErrorFigures core = compare(got.core, want.core);
    const ErrorFigures g = compare(got.g, want.g);
    const ErrorFigures beta = compare(got.beta, want.beta);
    EXPECT_LT(core.relative, kCoreTolerance) << what << ": core " << core.text();
    EXPECT_LT(g.relative, kGateTolerance) << what << ": g " << g.text();
    EXPECT_LT(beta.relative, kGateTolerance) << what << ": beta " << beta.text();

    const DeltaNetShape& sh = layer.shape;
    const std::size_t convSlot = std::size_t(sh.convDim()) * std::size_t(sh.convKernel - 1);
    const std::size_t recSlot
        = std::size_t(sh.valueHeads) * std::size_t(sh.keyDim) * std::size_t(sh.valueDim);
    ErrorFigures worstConv, worstRec;
    for (int slot = 0; slot < layer.slots; ++slot) {
        auto part = [&](const std::vector<float>& v, std::size_t size) {
            return std::vector<float>(v.begin() + std::ptrdiff_t(slot * size),
                v.begin() + std::ptrdiff_t((slot + 1) * size));
        };
        bool used = false;
        for (int s : step.slots)
            used = used || s == slot;
        if (!used) {
            EXPECT_EQ(
                compare(part(got.convState, convSlot), part(before.convState, convSlot)).maxAbs,
                0.0)
                << what << ": conv state of unused slot " << slot;
            EXPECT_EQ(
                compare(part(got.recurrentState, recSlot), part(before.recurrentState, recSlot))
                    .maxAbs,
                0.0)
                << what << ": recurrent state of unused slot " << slot;
            continue;
        }
        const ErrorFigures conv
            = compare(part(got.convState, convSlot), part(want.convState, convSlot));
        const ErrorFigures rec
            = compare(part(got.recurrentState, recSlot), part(want.recurrentState, recSlot));
        EXPECT_LT(conv.relative, kGateTolerance) << what << ": conv state slot " << slot;
        EXPECT_LT(rec.relative, kCoreTolerance)
            << what << ": recurrent state slot " << slot << " " << rec.text();
        worstConv.relative = std::max(worstConv.relative, conv.relative);
        worstConv.maxAbs = std::max(worstConv.maxAbs, conv.maxAbs);
        worstRec.relative = std::max(worstRec.relative, rec.relative);
        worstRec.maxAbs = std::max(worstRec.maxAbs, rec.maxAbs);
    }
    std::printf("%-58s core %s | state %s | conv %s\n", what.c_str(), core.text().c_str(),
        worstRec.text().c_str(), worstConv.text().c_str());
}

// Runs the step on the device and on the CPU (both from the same states) and compares them.
void runAndCompare(DeltaNetLayerData& layer, DeviceDeltaNet& device, const DeltaNetStepData& step,
    const std::string& what, const dn::Tuning* tuning = nullptr)
{
    DeltaNetStepResult before, got;
    cudaError_t err = device.downloadStates(before.convState, before.recurrentState);
    ASSERT_EQ(err, cudaSuccess) << what << ": " << cudaGetErrorString(err);
    err = device.run(step, &got, tuning);
    ASSERT_EQ(err, cudaSuccess) << what << ": " << cudaGetErrorString(err);
    const DeltaNetStepResult want = cpuStep(layer, step);
    expectStepMatches(layer, step, got, want, before, what);
}

TEST(GatedDeltaNetCuda, prefillMatchesCpuForMixedLengthsAndScatteredSlots)
{
    std::uint32_t seed = 1;
    for (bool tiled : { true, false })
        for (const DeltaNetShape& shape : shapes(tiled)) {
            DeltaNetLayerData layer = randomLayer(shape, 8, seed++);
            DeviceDeltaNet device(layer);
            // Capacity above the longest sequence, as a captured step would hand in.
            const DeltaNetStepData step
                = randomStep(shape, { 1, 5, 64, 65, 300 }, { 6, 1, 4, 0, 3 }, seed++, 320);
            runAndCompare(layer, device, step, "prefill 1,5,64,65,300 " + describe(shape));
        }
}

TEST(GatedDeltaNetCuda, eachLengthAloneMatchesCpu)
{
    std::uint32_t seed = 100;
    for (bool tiled : { true, false })
        for (const DeltaNetShape& shape :
            { shapeOf(2, 4, 16, 16, tiled), shapeOf(2, 4, 128, 128, tiled) }) {
            DeltaNetLayerData layer = randomLayer(shape, 3, seed++);
            DeviceDeltaNet device(layer);
            for (int n : { 1, 5, 64, 65, 300 }) {
                const DeltaNetStepData step = randomStep(shape, { n }, { 2 }, seed++);
                runAndCompare(layer, device, step,
                    "alone " + std::to_string(n) + " (" + (n == 1 ? "decode" : "prefill") + ") "
                        + describe(shape));
            }
        }
}

TEST(GatedDeltaNetCuda, decodeMatchesCpuWithScatteredSlots)
{
    std::uint32_t seed = 200;
    for (bool tiled : { true, false })
        for (const DeltaNetShape& shape : shapes(tiled)) {
            DeltaNetLayerData layer = randomLayer(shape, 9, seed++);
            DeviceDeltaNet device(layer);
            const DeltaNetStepData step
                = randomStep(shape, { 1, 1, 1, 1, 1 }, { 7, 2, 5, 0, 8 }, seed++);
            runAndCompare(layer, device, step, "decode x5 " + describe(shape));
        }
}

TEST(GatedDeltaNetCuda, decodeAfterPrefillCarriesBothStates)
{
    std::uint32_t seed = 300;
    for (bool tiled : { true, false })
        for (const DeltaNetShape& shape :
            { shapeOf(1, 2, 32, 64, tiled), shapeOf(2, 4, 128, 128, tiled) }) {
            DeltaNetLayerData layer = randomLayer(shape, 4, seed++);
            DeviceDeltaNet device(layer);
            // The device keeps its own states across steps; the CPU keeps layer's.
            runAndCompare(layer, device, randomStep(shape, { 300, 65 }, { 3, 1 }, seed++),
                "carry: prefill 300,65 " + describe(shape));
            for (int t = 0; t < 3; ++t)
                runAndCompare(layer, device, randomStep(shape, { 1, 1 }, { 3, 1 }, seed++),
                    "carry: decode " + std::to_string(t) + " " + describe(shape));
            runAndCompare(layer, device, randomStep(shape, { 2, 70 }, { 1, 3 }, seed++),
                "carry: prefill 2,70 " + describe(shape));
        }
}

TEST(GatedDeltaNetCuda, everyColumnSliceWidthAndRecurrenceKernelMatchesCpu)
{
    std::uint32_t seed = 400;
    for (int columns : { 16, 32 })
        for (int pipeline : { 0, 1 }) {
            dn::Tuning tuning;
            tuning.decodeColumns = columns;
            tuning.chunkColumns = columns;
            tuning.chunkPipeline = pipeline;
            for (const DeltaNetShape& shape :
                { shapeOf(2, 4, 64, 32, true), shapeOf(2, 4, 128, 128, false) }) {
                DeltaNetLayerData layer = randomLayer(shape, 4, seed++);
                DeviceDeltaNet device(layer);
                const std::string variant = " columns " + std::to_string(columns)
                    + (pipeline ? " pipelined " : " plain ");
                runAndCompare(layer, device, randomStep(shape, { 130, 7 }, { 2, 0 }, seed++),
                    "prefill" + variant + describe(shape), &tuning);
                runAndCompare(layer, device, randomStep(shape, { 1, 1, 1 }, { 3, 0, 2 }, seed++),
                    "decode" + variant + describe(shape), &tuning);
            }
        }
}

// Width 4 (Qwen3.5's) has its own conv kernel; the others take the general one.
TEST(GatedDeltaNetCuda, otherConvKernelWidthsMatchCpu)
{
    std::uint32_t seed = 500;
    for (int width : { 2, 3, 5 }) {
        DeltaNetShape shape = shapeOf(2, 4, 32, 32, width % 2 == 0);
        shape.convKernel = width;
        DeltaNetLayerData layer = randomLayer(shape, 3, seed++);
        DeviceDeltaNet device(layer);
        const std::string what = "conv width " + std::to_string(width) + " ";
        runAndCompare(layer, device, randomStep(shape, { 1, 3, 70 }, { 2, 0, 1 }, seed++),
            what + "prefill 1,3,70 " + describe(shape));
        runAndCompare(layer, device, randomStep(shape, { 1, 1 }, { 1, 2 }, seed++),
            what + "decode " + describe(shape));
    }
}

TEST(GatedDeltaNetCuda, refusesTooLittleScratchAndOddShapes)
{
    const DeltaNetShape shape = shapeOf(2, 4, 16, 16, true);
    DeltaNetLayerData layer = randomLayer(shape, 2, 7);
    DeviceDeltaNet device(layer);
    ASSERT_EQ(device.upload(randomStep(shape, { 3 }, { 1 }, 8)), cudaSuccess);
    kernels::cuda::DeviceScratch small = device.scratch();
    small.bytes -= 1;
    EXPECT_EQ(
        kernels::cuda::gatedDeltaNet(device.qkv(), device.alpha(), device.betaRaw(), device.z(),
            device.convWeight(), device.dtBias(), device.negA(), device.normWeight(), shape,
            device.layout(), device.states(), device.core(), small, nullptr),
        cudaErrorInvalidValue);
    DeltaNetShape odd = shape;
    odd.keyDim = 24;
    EXPECT_EQ(
        kernels::cuda::gatedDeltaNet(device.qkv(), device.alpha(), device.betaRaw(), device.z(),
            device.convWeight(), device.dtBias(), device.negA(), device.normWeight(), odd,
            device.layout(), device.states(), device.core(), device.scratch(), nullptr),
        cudaErrorInvalidValue);
}

} // namespace
} // namespace cw::test
