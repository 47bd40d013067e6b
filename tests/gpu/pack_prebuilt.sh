#!/bin/bash
# On the developer's machine: packs the engine-only CUDA build (clausewright-cli and the gpu
# tests) into .device-carry/bin/engine.tar.xz for `tests/gpu/run_on_device.sh prebuilt ...`,
# so a device call spends its minutes testing and measuring instead of compiling.
#   cmake -S . -B build-cuda-eng -G Ninja -DCW_ENGINE_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
#     -DCMAKE_CUDA_ARCHITECTURES=90-real -DCW_BUILD_BENCHES=OFF -DCW_BENCHMARK_SWITCHES=ON
#   ninja -C build-cuda-eng clausewright-cli gpu_cuda_runtime gpu_attention gpu_deltanet \
#     gpu_model_golden gpu_model_golden_bf16 gpu_model_vs_cpu gpu_moe gpu_ops gpu_quant \
#     gpu_backend_ops geometry_check
#   tests/gpu/pack_prebuilt.sh
# Only sm_90 machine code ("90-real", no PTX) keeps the archive within a call's carry limit.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=build-cuda-eng
mkdir -p .device-carry/bin
# The programs load the engine from libcw_engine.so, found through their RUNPATH (this build
# folder under /work/main, which the device script points at the checkout).
files=("$build/app/clausewright-cli" "$build/engine/libcw_engine.so")
[[ -x $build/tests/gpu/geometry/geometry_check ]] && files+=("$build/tests/gpu/geometry/geometry_check")
while IFS= read -r f; do files+=("$f"); done < <(find "$build/tests/gpu" -type f -executable -name 'gpu_*' ! -name '*_bench')
tar cf - "${files[@]}" | xz -T2 -6 >.device-carry/bin/engine.tar.xz
ls -la .device-carry/bin/engine.tar.xz
