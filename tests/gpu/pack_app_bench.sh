#!/bin/bash
# On the developer's machine: packs what the product's own paths need to be measured on the
# accelerator machine, which has no Qt: bench_llm_review (the desktop review's LLM pass, the
# app's own code), bench_server_load, clausewright-server and clausewright-cli, built here with
# CUDA for sm_90, the engine library, and every library they load (Qt, Poppler, QCoro, ICU ...)
# but the C library's, the CUDA toolkit's and the driver's, which that machine has. Also the
# longest of the shared CUAD PDFs, for the long-contract review. Writes
# .device-carry/app/app-bench.tar.xz for `tests/gpu/run_on_device.sh appbench`.
#   tests/gpu/pack_app_bench.sh [build-dir (default build-app, configured here)]
# sm_90 machine code alone ("90-real", no PTX) and no desktop window: the archive and the
# checkout (~29 MB) must travel within a call's 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-app}
if [[ ! -f $build/build.ninja ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90-real \
    -DCW_BUILD_GUI=OFF >/dev/null
fi
cmake --build "$build" --target bench_llm_review bench_server_load clausewright-server \
  clausewright-cli cuad_classifier field_extractors llm_review gpu_scheduled_answers \
  gpu_request_scheduler gpu_scheduler_limits >/dev/null
programs=("$build/tests/bench/llm_review/bench_llm_review"
  "$build/tests/bench/server_load/bench_server_load" "$build/app/server/clausewright-server"
  "$build/app/clausewright-cli")
# The backend-ops table too, where it is built: a call that carries this archive has no room
# for the engine's build dependencies, and a kernel change can then be checked in the same call.
if [[ -x $build/tests/gpu/backend_ops/gpu_backend_ops ]]; then
  programs+=("$build/tests/gpu/backend_ops/gpu_backend_ops")
fi
# The scheduler's tests on cuda:0 too (tests/gpu/scheduler): the review's requests go through
# the code they check, and their golden models travel with the checkout.
programs+=("$build"/tests/gpu/scheduler/gpu_{scheduled_answers,request_scheduler,scheduler_limits})
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/contracts"
cp "${programs[@]}" "$stage/bin/"
# The review's heads and their data, where an installed program looks (bin/../lib/clausewright/
# plugins): the build tree's folder, compiled into the programs, does not travel.
mkdir -p "$stage/lib/clausewright/plugins"
cp "$build"/plugins/*.so "$build"/plugins/cuad_classifier.cwm "$build"/plugins/llm_questions.json \
  "$stage/lib/clausewright/plugins/"
# The libraries: found through LD_LIBRARY_PATH there (RUNPATH, which names this build folder,
# comes after it).
for program in "${programs[@]}"; do
  ldd "$program" | awk '$3 ~ /^\// { print $3 }'
done | sort -u | while IFS= read -r lib; do
  case $(basename "$lib") in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux* | libcuda.so* \
      | libcublas* | libcudart* | libnvrtc* | libnvJitLink*) ;;
    *) cp -L "$lib" "$stage/lib/" ;;
  esac
done
# The longest by its text, not its file (a scan is large and short).
longest=$(for f in ../shared/data/contracts/pdf/*.pdf; do
  [[ -f "$f" ]] && echo "$(pdftotext "$f" - 2>/dev/null | wc -c) $f"
done | sort -n | tail -1 | cut -d' ' -f2-)
if [[ -n "$longest" ]]; then
  cp "$longest" "$stage/contracts/longest.pdf"
fi
cp resources/samples/sample-contract.pdf "$stage/contracts/sample.pdf"
mkdir -p .device-carry/app
tar cf - -C "$stage" . | xz -T2 -9 >.device-carry/app/app-bench.tar.xz
ls -la .device-carry/app/app-bench.tar.xz
tar tJf .device-carry/app/app-bench.tar.xz | grep -c "^./lib/" | sed 's/$/ libraries/'
