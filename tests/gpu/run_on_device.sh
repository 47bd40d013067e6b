#!/bin/bash
# On the accelerator machine, from the repository root: builds the engine without Qt (the
# Debian packages it needs travel as .deb files in .device-carry/debs), runs the gpu tests and,
# with "bench", measures clausewright-cli bench beside llama.cpp (.device-carry/peer) on one
# synthetic Qwen3.6-35B-A3B Q4_K_M file. Results land in $OUT.
#   tests/gpu/run_on_device.sh [build] [test] [bench] [profile] [sanitize] [peer]
# "sanitize" runs compute-sanitizer (memcheck, racecheck) over a short batched generate on the
# tiny Qwen3.6 preset.
# "profile" records one decode step (batch 1 and 32) under ncu, time and DRAM bytes summed
# per kernel by tests/gpu/ncu_summary.py.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
STEPS=" $* "
has() { [[ "$STEPS" == *" $1 "* ]]; }
mkdir -p /tmp/deps
for f in .device-carry/debs/*.deb; do dpkg -x "$f" /tmp/deps; done
export PATH=/tmp/deps/usr/bin:$PATH
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:$LD_LIBRARY_PATH
export PKG_CONFIG_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu/pkgconfig:/tmp/deps/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=/tmp/deps
export PKG_CONFIG_LIBDIR=$PKG_CONFIG_PATH
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader

M=/tmp/models/q36.gguf
B=build-dev/app/clausewright-cli
if has build; then
  start=$(date +%s)
  if [[ ! -f build-dev/build.ninja ]]; then
    cmake -S . -B build-dev -G Ninja -DCW_ENGINE_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DCW_BUILD_BENCHES=OFF -DCMAKE_PREFIX_PATH=/tmp/deps/usr >"$OUT/configure.log" 2>&1 \
      || { tail -30 "$OUT/configure.log"; exit 1; }
  fi
  # The command-line tool first: the benchmark file is written while the tests build and run.
  ninja -C build-dev -j16 clausewright-cli >"$OUT/build.log" 2>&1
  echo "clausewright-cli built (exit $?) in $(( $(date +%s) - start )) s"
  if { has bench || has profile; } && [[ ! -f $M ]]; then
    mkdir -p /tmp/models
    (s=$(date +%s); $B synth --preset qwen3.6-35b-a3b --quant q4_k_m --out $M >/dev/null 2>"$OUT/synth.err"; \
      echo "synth exit $? in $(( $(date +%s) - s )) s" >>"$OUT/synth.err") &
    synth_pid=$!
  fi
  ninja -C build-dev -j16 -k 0 gpu_cuda_runtime gpu_attention gpu_deltanet gpu_model_golden \
    gpu_model_golden_bf16 gpu_model_vs_cpu gpu_moe gpu_ops gpu_quant >>"$OUT/build.log" 2>&1
  echo "build exit $? in $(( $(date +%s) - start )) s"
  grep -E "error|FAILED" "$OUT/build.log" | head -20
fi
if has test; then
  ctest --test-dir build-dev -L gpu -j4 --output-on-failure --timeout 100 >"$OUT/ctest_gpu.log" 2>&1
  echo "ctest gpu exit $?"
  grep -E "^[0-9 ]+/[0-9]+ Test|tests passed|Failure|max \|error\||of max|identical|same|error [0-9]" "$OUT/ctest_gpu.log" | tail -70
fi
if has bench; then
  [[ -n "$synth_pid" ]] && wait $synth_pid
  cat "$OUT/synth.err" 2>/dev/null | tail -2
  export CW_COMMIT=${CW_COMMIT:-unknown}
  : >"$OUT/bench.jsonl"
  # --repeat 3: the first run also pays each batch size's eager warm-up and graph capture.
  for args in "--prompt-tokens 512 --gen-tokens 64 --batch 1 --repeat 3" "--prompt-tokens 8192 --gen-tokens 2 --batch 1" \
      "--prompt-tokens 512 --gen-tokens 16 --batch 32 --repeat 2" "--prompt-tokens 28000 --gen-tokens 2 --batch 1"; do
    timeout 60 $B bench --model $M --device cuda:0 $args 2>>"$OUT/bench.err" | tee -a "$OUT/bench.jsonl"
  done
  grep -v "^bench: loaded" "$OUT/bench.err" | tail -5; grep -m1 "memory plan" "$OUT/bench.err"
fi
if has sanitize; then
  T=/tmp/models/tiny36.gguf
  mkdir -p /tmp/models
  [[ -f $T ]] || $B synth --preset tiny-qwen3.6-moe --quant q4_k_m --out $T >/dev/null 2>&1
  for tool in memcheck racecheck; do
    timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $B bench --model $T \
      --device cuda:0 --prompt-tokens 40 --gen-tokens 6 --batch 3 >"$OUT/sanitize_$tool.log" 2>&1
    echo "compute-sanitizer $tool exit $?: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize_$tool.log" | tail -1)"
  done
fi
if has profile; then
  [[ -n "$synth_pid" ]] && wait $synth_pid
  NCU="ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv"
  # Steps: 1 prefill, 2 eager warm-up, 3 capture, 4.. graph replays.
  for spec in "b1 6 --prompt-tokens 512 --gen-tokens 8 --batch 1" \
      "b32 37 --prompt-tokens 512 --gen-tokens 8 --batch 32"; do
    set -- $spec; name=$1; step=$2; shift 2
    CW_CUDA_PROFILE_STEP=$step timeout 200 $NCU $B bench --model $M --device cuda:0 "$@" \
      >"$OUT/ncu_$name.csv" 2>"$OUT/ncu_$name.err"
    echo "== $name (exit $?)"; python3 tests/gpu/ncu_summary.py "$OUT/ncu_$name.csv" 40
  done
fi
