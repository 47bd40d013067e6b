#!/bin/bash
# On the accelerator machine, from the repository root: builds the engine without Qt (the
# Debian packages it needs travel as .deb files in .device-carry/debs), runs the gpu tests and,
# with "bench", measures clausewright-cli bench on one synthetic Qwen3.6-35B-A3B Q4_K_M file;
# "peer" builds llama.cpp's CUDA backend from .device-carry/peer/*.tar.xz and measures it on
# the same file in the same call. Results land in $OUT.
#   tests/gpu/run_on_device.sh [build|prebuilt] [test] [backendops] [geometry] [q8agree] [bench] [ab] [peer] [cpu] [bf16ref] [profile] [sanitize] [appbench] [abuse] [offload] [offloadpeer] [contention]
# "prebuilt" takes the engine built on the developer's machine instead of building it here
# (tests/gpu/pack_prebuilt.sh packs it into .device-carry/bin; the paths compiled into the
# tests are the developer's, so /work/main points at this checkout when it is free).
# "cpu" measures the CPU backend on this machine's cores beside llama.cpp's CPU build (made here,
# native): bench --device cpu against llama-bench at all cores and half of them, on the same file
# (needs "build" or "prebuilt" for the command-line tool).
# "ab" runs the batch-1 decode benchmark under each setting of $AB (e.g. AB="CW_CUDA_INTMV=warp
# CW_CUDA_INTMV=staged"; A=1,B=2 sets both for one setting, here and in $OFFLOAD_MODES), twice each, for A/B figures from one call; $AB_ARGS replaces the
# benchmark's arguments (e.g. "--prompt-tokens 8192 --gen-tokens 2 --batch 1" for prefill).
# "backendops" runs the whole backend-ops table (tests/gpu/backend_ops: every CUDA entry point
# against the CPU op, --full --perf) and writes it to $OUT/backend_ops.txt.
# BACKENDOPS_SECONDS, GEOMETRY_MAKE_SECONDS and GEOMETRY_CHECK_SECONDS bound those steps (480, 300
# and 360 s by default) when a call must fit what is left of the session's device time;
# GEOMETRY_CHECK_SECONDS=0 makes the files without checking them (for q8agree alone);
# BACKENDOPS_FILTER (a gtest filter, e.g. "drawTokens.*") runs part of the table; with
# "appbench" it runs the archive's own table first (pack_app_bench.sh carries it where built).
# "geometry" builds seeded random geometries of both architectures with transformers
# (tests/golden/make_geometries.py: HF folders, float32 logits, GGUFs by clausewright-cli
# convert) and runs tests/gpu/geometry's geometry_check on the CPU and cuda:0 at f32 (4 shards
# side by side); its table lands in $OUT/geometry.txt.
# "q8agree" (after "geometry", in the same call) counts how often ours on cuda:0 and llama.cpp's
# CUDA build (tests/golden/llama_logits, built with the peer) pick the float32 reference's top-1
# token on the geometries' Q8_0 and f32 GGUFs (tests/golden/q8_agreement.py), ours at each
# precision of $Q8AGREE_PRECISIONS (default "bf16 f32"); $OUT/q8_agreement_PRECISION.md.
# "bf16ref" measures how far transformers' own bf16 computation lands from the golden float32
# logits (tests/golden/bf16_reference_error.py), beside the bf16 golden test's figures.
# "sanitize" runs compute-sanitizer (memcheck, racecheck) over short batched generates (3 and 12
# sequences) on the tiny Qwen3.6 preset.
# "appbench" measures the product's own paths on cuda:0 (tests/gpu/pack_app_bench.sh packs them,
# with the Qt runtime this machine lacks, into .device-carry/app): the desktop review's LLM pass
# in-process on the sample and the longest CUAD contract, the same review's requests through
# clausewright-server, one stream's and 32 streams' decode rate through the server, and bench's
# b1 and b32 beside them from the same binary, as JSON lines in $OUT/appbench.jsonl; first the
# scheduler's gpu tests from the archive (tests/gpu/scheduler, on cuda:0 at f32). Carry
# .device-carry/app alone (31 MB; with the ~29 MB checkout a call holds 64 MiB): it has its own
# clausewright-cli and engine library, so the call needs neither build nor prebuilt.
# "abuse" runs issue 36's abuse benchmark at its scale (200 honest streaming clients, then the same
# beside 100 slowloris and 10 oversized-body clients) on this machine's CPU with the tiny model,
# where the attackers do not share two cores with the server; JSON in $OUT/abuse.json.
# "offload" (issue 33) runs bench at each GPU memory budget of $OFFLOAD_BUDGETS (GiB, default
# "12 16 24"): batch-1 decode and an 8,192-token prompt, the experts that do not fit in host
# memory; "offloadpeer" (with "peer") runs llama-bench with -ncmoe N beside it, N the fewest
# layers' experts on the CPU whose peak on the card fits each budget. $OUT/offload*.jsonl.
# $OFFLOAD_SKEW (e.g. 0.2) also measures a file whose routing is skewed (synth --router-skew)
# at $OFFLOAD_SKEW_BUDGETS (default: the same budgets), and "offloadpeer" llama.cpp on that file
# too, at the N that fit each budget. With "peer", the offload runs wait for
# its build (~300 s), so a call with both needs OFFLOAD_PEER_N and few budgets to fit.
# "contention" measures the GPU's reads of mapped host memory and the CPU's own reads, alone
# and at once, at 1, 4, 8 and 15 CPU threads (whether the decode split can beat either side):
# $OUT/contention.jsonl.
# "profile" records one decode step (batch 1 and 32) under ncu, time and DRAM bytes summed
# per kernel by tests/gpu/ncu_summary.py.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
# A call brings back at most 8 files: the figures go to $OUT, every log into one archive.
L=/tmp/device-logs
mkdir -p $L
# gzip, not xz: a call stopped near its limit leaves seconds for this, and xz needs more.
pack_logs() { tar czf "$OUT/logs.tar.gz" -C $L . 2>/dev/null; }
trap pack_logs EXIT
trap 'echo "stopped at the time limit"; trap - EXIT; pack_logs; exit 124' TERM
STEPS=" $* "
has() { [[ "$STEPS" == *" $1 "* ]]; }
source tests/gpu/device_deps.sh
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader

M=/tmp/models/q36.gguf
BUILD=build-dev
if has prebuilt; then
  BUILD=build-cuda-eng
  tar xJf .device-carry/bin/engine.tar.xz || exit 1
  [[ -e /work/main ]] || { mkdir -p /work && ln -s "$PWD" /work/main; }
fi
B=$BUILD/app/clausewright-cli
synth() {
  mkdir -p /tmp/models
  (s=$(date +%s); $B synth --preset qwen3.6-35b-a3b --quant q4_k_m --out $M >/dev/null 2>"$L/synth.err"; \
    echo "synth exit $? in $(( $(date +%s) - s )) s" >>"$L/synth.err") &
  synth_pid=$!
}
P=/tmp/peer/llama.cpp
if has peer || has q8agree || has offloadpeer; then # built while ours is tested; its benchmark runs after ours, alone
  # on the card. tests/golden/llama_logits (the peer's logits for q8agree) builds inside it.
  (s=$(date +%s); mkdir -p /tmp/peer && tar xJf .device-carry/peer/llama.cpp-*.tar.xz -C /tmp/peer \
    && ln -sfn /tmp/peer/llama.cpp-* $P \
    && echo "add_subdirectory($PWD/tests/golden/llama_logits llama_logits)" >>$P/CMakeLists.txt \
    && cmake -S $P -B $P/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_CUDA_COMPILER=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc) \
      -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
      -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
      >"$L/peer_build.log" 2>&1 \
    && nice -n 5 ninja -C $P/build -j14 llama-bench llama-batched-bench llama_logits \
      >>"$L/peer_build.log" 2>&1; \
    echo "llama.cpp build exit $? in $(( $(date +%s) - s )) s" >>"$L/peer_build.log") &
  peer_pid=$!
fi
if has cpu; then # llama.cpp's CPU build, while the model file is written
  (s=$(date +%s); mkdir -p /tmp/peer-cpu && tar xJf .device-carry/peer/llama.cpp-*.tar.xz -C /tmp/peer-cpu \
    && C=$(ls -d /tmp/peer-cpu/llama.cpp-*) \
    && cmake -S $C -B $C/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=OFF -DGGML_NATIVE=ON \
      -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=OFF \
      -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF >"$L/cpu_peer_build.log" 2>&1 \
    && ninja -C $C/build -j16 llama-bench >>"$L/cpu_peer_build.log" 2>&1; \
    echo "llama.cpp CPU build exit $? in $(( $(date +%s) - s )) s" >>"$L/cpu_peer_build.log") &
  cpu_peer_pid=$!
fi
MS=/tmp/models/q36-skew.gguf
if has offload && [[ -n "$OFFLOAD_SKEW" ]]; then # written beside the other; synth is one thread
  skew_synth() {
    mkdir -p /tmp/models
    ($B synth --preset qwen3.6-35b-a3b --quant q4_k_m --router-skew $OFFLOAD_SKEW --out $MS \
      >/dev/null 2>"$L/synth_skew.err"; echo "skewed synth exit $?" >>"$L/synth_skew.err") &
    skew_pid=$!
  }
fi
if has prebuilt && { has bench || has ab || has profile || has peer || has cpu || has offload; } && [[ ! -f $M ]]; then
  synth
fi
if has build; then
  start=$(date +%s)
  if [[ ! -f build-dev/build.ninja ]]; then
    cmake -S . -B build-dev -G Ninja -DCW_ENGINE_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DCW_BUILD_BENCHES=OFF -DCW_BENCHMARK_SWITCHES=ON \
      -DCMAKE_PREFIX_PATH=/tmp/deps/usr >"$L/configure.log" 2>&1 \
      || { tail -30 "$L/configure.log"; exit 1; }
  fi
  # The command-line tool first: the benchmark file is written while the tests build and run.
  ninja -C build-dev -j16 clausewright-cli >"$L/build.log" 2>&1
  echo "clausewright-cli built (exit $?) in $(( $(date +%s) - start )) s"
  if { has bench || has ab || has profile || has peer || has cpu || has offload; } && [[ ! -f $M ]]; then
    synth
  fi
  [[ -n "$OFFLOAD_SKEW" ]] && has offload && skew_synth
  ninja -C build-dev -j16 -k 0 gpu_cuda_runtime gpu_attention gpu_deltanet gpu_model_golden \
    gpu_model_golden_bf16 gpu_model_vs_cpu gpu_expert_offload gpu_moe gpu_ops gpu_quant gpu_backend_ops \
    gpu_scheduled_answers gpu_request_scheduler gpu_scheduler_limits \
    geometry_check gpu_host_contention_bench >>"$L/build.log" 2>&1
  echo "build exit $? in $(( $(date +%s) - start )) s"
  grep -E "error|FAILED" "$L/build.log" | head -20
fi
if has test; then
  if has prebuilt; then # the developer's CTest files name tests this archive does not hold
    mkdir -p /tmp/gpu-logs
    for t in $BUILD/tests/gpu/gpu_cuda_runtime $BUILD/tests/gpu/*/gpu_*; do
      [[ -x $t && $t != *_bench ]] || continue
      n=$(basename $t)
      (timeout 150 $t --gtest_brief=1 >/tmp/gpu-logs/$n.log 2>&1; echo "exit $?" >>/tmp/gpu-logs/$n.log) &
    done
    wait $(jobs -p | grep -v -x -e "${peer_pid:-x}" -e "${synth_pid:-x}" -e "${skew_pid:-x}")
    status=0
    for f in /tmp/gpu-logs/*.log; do
      echo "== $(basename $f .log)"; cat $f; tail -1 $f | grep -q "exit 0" || status=1
    done >"$L/ctest_gpu.log"
    echo "gpu tests exit $status"; grep -E "^== |^exit " "$L/ctest_gpu.log" | paste - - | head -12
    grep -E "^\[  FAILED" "$L/ctest_gpu.log" | sort -u | head -20
  else
    ctest --test-dir build-dev -L gpu -j4 --output-on-failure --timeout 100 >"$L/ctest_gpu.log" 2>&1
    echo "ctest gpu exit $?"
  fi
  grep -E "^[0-9 ]+/[0-9]+ Test|tests passed|Failure|max \|error\||of max|identical|same|error [0-9]" "$L/ctest_gpu.log" | tail -70
fi
if has backendops; then # the whole table, each op timed; its rows in $OUT/backend_ops.txt
  s=$(date +%s)
  timeout ${BACKENDOPS_SECONDS:-480} $BUILD/tests/gpu/backend_ops/gpu_backend_ops --full --perf --gtest_brief=1 \
    ${BACKENDOPS_FILTER:+--gtest_filter=$BACKENDOPS_FILTER} \
    --table "$OUT/backend_ops.txt" >"$L/backend_ops.log" 2>&1
  echo "backend ops exit $? in $(( $(date +%s) - s )) s"
  grep -E "^\[  FAILED" "$L/backend_ops.log" | sort -u | head -40
  tail -2 "$OUT/backend_ops.txt" 2>/dev/null || tail -20 "$L/backend_ops.log"
fi
if has geometry; then # generated geometries, CPU vs cuda:0 vs transformers; $OUT/geometry.txt
  s=$(date +%s)
  G=/tmp/geometry
  rm -rf $G
  timeout ${GEOMETRY_MAKE_SECONDS:-300} python3 tests/golden/make_geometries.py --out $G --cli $B --workers 8 \
    >"$L/geometry_make.log" 2>&1
  echo "make_geometries exit $? in $(( $(date +%s) - s )) s"; tail -3 "$L/geometry_make.log"
  if [[ -f $G/manifest.json && ${GEOMETRY_CHECK_SECONDS:-360} != 0 ]]; then
    for i in 0 1 2 3; do
      timeout ${GEOMETRY_CHECK_SECONDS:-360} $BUILD/tests/gpu/geometry/geometry_check --manifest $G/manifest.json \
        --shard $i/4 --threads 4 --device cuda:0 --precision f32 --table $G/table_$i.txt \
        >"$L/geometry_$i.log" 2>&1 &
    done
    wait $(jobs -p | grep -v -x -e "${peer_pid:-x}" -e "${synth_pid:-x}" -e "${cpu_peer_pid:-x}" -e "${skew_pid:-x}")
    for i in 0 1 2 3; do
      [[ -f $G/table_$i.txt ]] || { echo "geometry shard $i left no table:"; tail -5 "$L/geometry_$i.log"; }
    done
    { head -1 $G/table_0.txt; for i in 0 1 2 3; do grep -v -E "^config |^err =|rows:" $G/table_$i.txt; done
      grep -h -E "^err =" $G/table_0.txt; grep -h -E "rows:" $G/table_*.txt; } >"$OUT/geometry.txt" 2>/dev/null
    echo "geometry_check done in $(( $(date +%s) - s )) s"
    grep -h -E "rows:" $G/table_*.txt; grep -E " (FAIL|ERROR) " "$OUT/geometry.txt" | head -30
  fi
fi
if has q8agree; then # issue 29: Q8_0 top-1 agreement with the float32 reference, ours beside
  # llama.cpp's CUDA build on geometry's files (run after "geometry" in the same call)
  wait $peer_pid; tail -1 "$L/peer_build.log"
  for precision in ${Q8AGREE_PRECISIONS:-bf16 f32}; do # ours at the default and at f32 products
    s=$(date +%s)
    timeout ${Q8AGREE_SECONDS:-300} python3 tests/golden/q8_agreement.py --manifest /tmp/geometry/manifest.json \
      --cli $B --llama $P/build/bin/llama_logits --precision $precision --workers 8 \
      --out "$OUT/q8_agreement_$precision.md" >"$L/q8_agreement_$precision.log" 2>&1
    echo "q8_agreement ($precision) exit $? in $(( $(date +%s) - s )) s"; tail -4 "$L/q8_agreement_$precision.log"
  done
fi
if has bench; then
  [[ -n "$synth_pid" ]] && wait $synth_pid
  cat "$L/synth.err" 2>/dev/null | tail -2
  export CW_COMMIT=${CW_COMMIT:-unknown}
  : >"$OUT/bench.jsonl"
  # --repeat 3: the first run also pays each batch size's eager warm-up and graph capture.
  for args in "--prompt-tokens 512 --gen-tokens 64 --batch 1 --repeat 3" "--prompt-tokens 8192 --gen-tokens 2 --batch 1 --repeat 3" \
      "--prompt-tokens 512 --gen-tokens 16 --batch 32 --repeat 2" "--prompt-tokens 28000 --gen-tokens 2 --batch 1"; do
    timeout 60 $B bench --model $M --device cuda:0 $args 2>>"$L/bench.err" | tee -a "$OUT/bench.jsonl"
  done
  grep -v "^bench: loaded" "$L/bench.err" | tail -5; grep -m1 "memory plan" "$L/bench.err"
fi
if has offload; then # issue 33: bench under GPU memory budgets, the experts that do not fit in host memory
  # Exactness first: the offloaded model's logits against every expert on the GPU.
  timeout ${OFFLOAD_TEST_SECONDS:-150} $BUILD/tests/gpu/model/gpu_expert_offload --gtest_brief=1 \
    >"$L/offload_test.log" 2>&1
  echo "gpu_expert_offload exit $?"; grep -E "FAILED|PASSED|Failure|Expected|Which|budget" "$L/offload_test.log" | head -30
  [[ -n "$synth_pid" ]] && wait $synth_pid
  # The host experts' figures depend on the CPU: the runs wait for the peer's build (on 14 of
  # the 16 cores it took the CPU-only view from 97.9 to 33 tok/s on 2026-12-07).
  if [[ -n "$peer_pid" ]]; then
    wait $peer_pid; tail -1 "$L/peer_build.log"; peer_pid=
  fi
  : >"$OUT/offload.jsonl"
  budgets=${OFFLOAD_BUDGETS:-12 16 24}
  # Each run alone, its JSON as it comes; every 15 s the card's use and PCIe traffic and the
  # process's CPU, so a slow run shows where it waits.
  offload_run() { # budget, bench args...
    local G=$1; shift
    local s=$(date +%s)
    env $RUN_ENV timeout ${OFFLOAD_RUN_SECONDS:-150} $B bench --model $M --device cuda:0 --gpu-memory $G "$@" \
      2>>"$L/offload.err" \
      | sed -u "s/^{/{\"gpu_memory_gib\": $G, \"router_skew\": ${RUN_SKEW:-0}, /" >>"$OUT/offload.jsonl" &
    local pid=$!
    while kill -0 $pid 2>/dev/null; do
      sleep 15; kill -0 $pid 2>/dev/null || break
      echo "  $(( $(date +%s) - s )) s: $(nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader)," \
        "pcie $(nvidia-smi dmon -s t -c 1 | tail -1 | awk '{print "rx " $2 " tx " $3 " MB/s"}')," \
        "cpu $(ps -C clausewright-cli -o pcpu= | head -1)%"
    done
    wait $pid
    echo "$G GiB $RUN_ENV $* ($(( $(date +%s) - s )) s):"; grep -v "^bench: loaded" "$L/offload.err" | tail -2
    grep "memory plan" "$L/offload.err" | tail -1 | cut -c1-900
    tail -1 "$OUT/offload.jsonl" | python3 -c 'import json, sys
for l in sys.stdin:
    j = json.loads(l); print("  prefill", round(j["prefill_tokens_per_s"]), "decode", round(j["decode_tokens_per_s"], 1), "tok/s")' 2>/dev/null
  }
  RUN_ENV=
  for G in $budgets; do
    offload_run $G --prompt-tokens 512 --gen-tokens 64 --batch 1 --repeat 2
    offload_run $G --prompt-tokens 8192 --gen-tokens 2 --batch 1 --repeat 2
  done
  # Decode with each way of reaching the host experts forced, at the first budget: what the
  # cost model chose between (bench's JSON names the switch).
  for RUN_ENV in ${OFFLOAD_MODES:-CW_CUDA_EXPERTS=inplace CW_CUDA_EXPERTS=host}; do
    RUN_ENV=${RUN_ENV//,/ } # A=1,B=2: both set for one run
    offload_run ${budgets%% *} --prompt-tokens 512 --gen-tokens 64 --batch 1 --repeat 2
  done
  RUN_ENV=
  if [[ -n "$OFFLOAD_SKEW" ]]; then # routing biased as trained models' is (synth --router-skew)
    wait $skew_pid; tail -1 "$L/synth_skew.err"
    M0=$M; M=$MS; RUN_SKEW=$OFFLOAD_SKEW
    # The first run counts which experts are chosen (kept in the model's cache folder); the
    # measured ones load with the most chosen on the GPU.
    timeout 120 $B bench --model $M --device cuda:0 --gpu-memory ${budgets%% *} \
      --prompt-tokens 2048 --gen-tokens 300 --batch 1 >/dev/null 2>>"$L/offload.err"
    for G in ${OFFLOAD_SKEW_BUDGETS:-$budgets}; do
      offload_run $G --prompt-tokens 512 --gen-tokens 64 --batch 1 --repeat 2
      offload_run $G --prompt-tokens 8192 --gen-tokens 2 --batch 1 --repeat 2
    done
    M=$M0; RUN_SKEW=0
  fi
fi
if has offloadpeer; then # llama.cpp with the experts of its first N layers on the CPU, the fewest N
  # whose peak on the card (nvidia-smi, over what was in use before) fits each budget
  [[ -n "$peer_pid" ]] && { wait $peer_pid; tail -1 "$L/peer_build.log"; }
  eval "$($B inspect --model $M | python3 -c 'import json, sys; m = json.load(sys.stdin)["memory"]; print("W=%d R=%d NL=%d" % (m["weights_bytes"], m["routed_expert_bytes"], m["moe_layers"]))')"
  base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
  : >"$OUT/offload_peer.jsonl"
  declare -A fitting # budget -> the N that fit
  for G in ${OFFLOAD_BUDGETS:-12 16 24}; do
    n=$(python3 -c "import math; print(max(0, math.ceil(($W + 1.5 * 2**30 - $G * 2**30) / ($R / $NL))))")
    # OFFLOAD_PEER_N="12:23 16:14" starts a budget's search at an N an earlier call found
    # (2026-12-07, H100: 23, 14 and 0 for 12, 16 and 24 GiB), saving a run or two each.
    for known in $OFFLOAD_PEER_N; do [[ ${known%%:*} == "$G" ]] && n=${known##*:}; done
    for N in $n $((n + 1)) $((n + 2)) $((n + 3)); do
      nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >/tmp/mem-$G-$N.txt &
      smi=$!
      timeout 300 $P/build/bin/llama-bench -m $M -ngl 99 -fa on -ub 2048 -ncmoe $N -t $(nproc) \
        -p 8192 -n 64 -r 2 -o jsonl 2>>"$L/offload_peer.err" >/tmp/peer-$G-$N.jsonl
      kill $smi; wait $smi 2>/dev/null
      peak=$(( $(sort -n /tmp/mem-$G-$N.txt | tail -1) - base ))
      sed "s/^{/{\"gpu_memory_gib\": $G, \"n_cpu_moe\": $N, \"peak_mib\": $peak, /" /tmp/peer-$G-$N.jsonl \
        | tee -a "$OUT/offload_peer.jsonl" | python3 -c 'import json, sys
for l in sys.stdin:
    j = json.loads(l); print(j["gpu_memory_gib"], "GiB: -ncmoe", j["n_cpu_moe"], "peak", j["peak_mib"], "MiB:", "pp" if j["n_prompt"] else "tg", round(j["avg_ts"], 1), "tok/s")'
      (( peak <= G * 1024 )) && break
    done
    fitting[$G]=$N
  done
  if [[ -n "$OFFLOAD_SKEW" && -f $MS ]]; then # the skewed file at the N that fit each budget
    for G in ${OFFLOAD_SKEW_BUDGETS:-${OFFLOAD_BUDGETS:-12 16 24}}; do
      N=${fitting[$G]:-0}
      timeout 300 $P/build/bin/llama-bench -m $MS -ngl 99 -fa on -ub 2048 -ncmoe $N -t $(nproc) \
        -p 8192 -n 64 -r 2 -o jsonl 2>>"$L/offload_peer.err" \
        | sed "s/^{/{\"gpu_memory_gib\": $G, \"n_cpu_moe\": $N, \"router_skew\": $OFFLOAD_SKEW, /" \
        | tee -a "$OUT/offload_peer.jsonl" | python3 -c 'import json, sys
for l in sys.stdin:
    j = json.loads(l); print(j["gpu_memory_gib"], "GiB, skewed: -ncmoe", j["n_cpu_moe"], "pp" if j["n_prompt"] else "tg", round(j["avg_ts"], 1), "tok/s")'
    done
  fi
fi
if has contention; then # alone on the host: the model file's writing would share its memory bandwidth
  [[ -n "$synth_pid" ]] && wait $synth_pid
  timeout 120 $BUILD/tests/gpu/moe/gpu_host_contention_bench 4 1 4 8 15 >"$OUT/contention.jsonl" \
    2>"$L/contention.err"
  echo "contention bench exit $?"; cat "$OUT/contention.jsonl"; tail -3 "$L/contention.err"
fi
if has ab; then # batch-1 decode under each setting of AB (space-separated VAR=value), twice each
  [[ -n "$synth_pid" ]] && wait $synth_pid
  for setting in ${AB:-CW_CUDA_INTMV=warp}; do
    for run in 1 2; do
      env ${setting//,/ } timeout 60 $B bench --model $M --device cuda:0 \
        ${AB_ARGS:---prompt-tokens 512 --gen-tokens 64 --batch 1 --repeat 2} 2>>"$L/ab.err" \
        | tail -1 | sed "s/^/$setting /" | tee -a "$OUT/ab.jsonl"
    done
  done
fi
A=/tmp/app
unpack_app() { # the archive of tests/gpu/pack_app_bench.sh, once a call
  [[ -x $A/bin/bench_server_load ]] && return 0
  mkdir -p $A && tar xJf .device-carry/app/app-bench.tar.xz -C $A || return 1
  [[ -e /work/main ]] || { mkdir -p /work && ln -s "$PWD" /work/main; } # paths compiled in
}
if has appbench; then
  unpack_app || exit 1
  export LD_LIBRARY_PATH=$A/lib:$LD_LIBRARY_PATH
  if [[ -n "$BACKENDOPS_FILTER" && -x $A/bin/gpu_backend_ops ]]; then # the archive's own table
    timeout ${BACKENDOPS_SECONDS:-480} $A/bin/gpu_backend_ops --full --perf --gtest_brief=1 \
      --gtest_filter="$BACKENDOPS_FILTER" --table "$OUT/backend_ops.txt" >"$L/backend_ops.log" 2>&1
    echo "backend ops ($BACKENDOPS_FILTER) exit $?"; grep -E "^\[  FAILED" "$L/backend_ops.log" | sort -u | head -20
    tail -2 "$OUT/backend_ops.txt" 2>/dev/null
  fi
  # The model file is written while the scheduler's tests run.
  if [[ ! -f $M && -z "$synth_pid" ]]; then
    B=$A/bin/clausewright-cli synth
  fi
  for t in $A/bin/gpu_scheduled_answers $A/bin/gpu_request_scheduler $A/bin/gpu_scheduler_limits; do
    [[ -x $t ]] || continue
    CW_TEST_DEVICE=cuda:0 CW_TEST_PRECISION=f32 timeout 120 $t --gtest_brief=1 \
      >"$L/$(basename $t).log" 2>&1
    echo "$(basename $t) exit $?"; grep -E "^\[  FAILED|Failure|Expected|Which is" "$L/$(basename $t).log" | head -12
  done
  if [[ ! -f $M ]]; then
    [[ -n "$synth_pid" ]] && wait $synth_pid
    [[ -f $M ]] || { mkdir -p /tmp/models; $A/bin/clausewright-cli synth --preset qwen3.6-35b-a3b \
      --quant q4_k_m --out $M >/dev/null 2>>"$L/synth.err"; }
  fi
  R="$OUT/appbench.jsonl"
  : >"$R"
  for c in sample longest; do
    [[ -f $A/contracts/$c.pdf ]] || continue
    timeout 180 $A/bin/bench_llm_review $M $A/contracts/$c.pdf 0 --device cuda:0 \
      --json /tmp/lr-$c.json >>"$L/appbench.log" 2>&1; echo "review $c in-process exit $?"
    cat /tmp/lr-$c.json >>"$R" 2>/dev/null
  done
  $A/bin/clausewright-server --model $M --device cuda:0 --parallel 32 --port 8642 \
    >"$L/appbench_server.log" 2>&1 &
  server_pid=$!
  for i in $(seq 1 240); do
    curl -sf http://127.0.0.1:8642/health >/dev/null 2>&1 && break; sleep 0.5
  done
  for c in sample longest; do
    [[ -f $A/contracts/$c.pdf ]] || continue
    timeout 180 $A/bin/bench_llm_review $M $A/contracts/$c.pdf --server http://127.0.0.1:8642 \
      --json /tmp/lrs-$c.json >>"$L/appbench.log" 2>&1; echo "review $c through the server exit $?"
    cat /tmp/lrs-$c.json >>"$R" 2>/dev/null
  done
  for clients in 1 32; do
    timeout 120 $A/bin/bench_server_load --url http://127.0.0.1:8642 --clients $clients \
      --requests $(( clients * 2 )) --max-tokens 256 >/tmp/load-$clients.json 2>>"$L/appbench.log"
    python3 -c 'import json, sys; print(json.dumps({"path": "server_load", **json.load(open(sys.argv[1]))}))' \
      /tmp/load-$clients.json >>"$R" 2>>"$L/appbench.log"
  done
  kill $server_pid; wait $server_pid 2>/dev/null
  for args in "--prompt-tokens 512 --gen-tokens 256 --batch 1 --repeat 2" \
      "--prompt-tokens 512 --gen-tokens 128 --batch 32 --repeat 2"; do
    timeout 90 $A/bin/clausewright-cli bench --model $M --device cuda:0 $args 2>>"$L/appbench.log" \
      | tail -1 >>"$R"
  done
  cat "$R"
fi
if has abuse; then # issue 36's load at its own scale, on this machine's 16 cores (CPU, tiny model)
  unpack_app || exit 1
  LD_LIBRARY_PATH=$A/lib:$LD_LIBRARY_PATH timeout 300 $A/bin/bench_server_load \
    --model tests/data/golden/models/qwen3_moe_a --threads 8 --parallel 32 --clients 200 \
    --requests 4000 --max-tokens 32 --slowloris 100 --oversized 10 --oversized-mibps 8 \
    >"$OUT/abuse.json" 2>"$L/abuse.log"
  echo "abuse benchmark exit $?"; cat "$OUT/abuse.json"
fi
if has bf16ref; then
  timeout 200 python3 tests/golden/bf16_reference_error.py --json "$OUT/bf16_reference.json" \
    2>"$L/bf16_reference.err" || tail -5 "$L/bf16_reference.err"
  grep -E "^== gpu_model_golden|max \|error\|" "$L/ctest_gpu.log" 2>/dev/null | head -60
fi
if has peer; then
  [[ -n "$synth_pid" ]] && wait $synth_pid
  wait $peer_pid; tail -1 "$L/peer_build.log"
  grep -q "build exit 0" "$L/peer_build.log" || grep -E "CMake Error|error" "$L/peer_build.log" | head -10
  # The same geometry as ours: 512-token prompt then 64 decoded, an 8,192-token prompt, and 32
  # sequences of a 512-token prompt decoding 16 each.
  timeout 240 $P/build/bin/llama-bench -m $M -ngl 99 -fa on -ub 2048 -p 512,8192 -n 64 -r 3 -o md \
    2>"$L/peer_bench.err" | tee "$OUT/peer_bench.md"
  timeout 120 $P/build/bin/llama-batched-bench -m $M -ngl 99 -fa on -c 17408 -b 2048 -ub 512 \
    -npp 512 -ntg 16 -npl 1,32 >"$L/peer_batched.log" 2>&1
  grep -E "^\|" "$L/peer_batched.log" | tail -4
  # What the next call can carry instead of building again.
  xz -T8 -c $P/build/bin/llama-bench >"$OUT/llama-bench.xz" 2>/dev/null || true
fi
if has cpu; then
  [[ -n "$synth_pid" ]] && wait $synth_pid
  lscpu | grep -E "Model name|^CPU\(s\)|NUMA node\(s\)|L3"
  # The vector extensions the kernels choose between (the full flags line is too long to read).
  echo "vector extensions: $(grep -o -w -E 'avx2|avx512[a-z_0-9]*|avx_vnni|amx[a-z_0-9]*' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  # After llama.cpp's build: ours must not share the cores with a compiler. bench --device cpu is
  # the figure reported (issue 32), at all cores and at half of them, llama-bench beside it.
  wait $cpu_peer_pid; tail -1 "$L/cpu_peer_build.log"
  : >"$OUT/cpu_bench.jsonl"
  for threads in $(nproc) $(( $(nproc) / 2 )); do
    timeout 200 $B bench --model $M --device cpu --threads $threads --prompt-tokens 512 \
      --gen-tokens 16 --repeat 2 2>>"$L/cpu_ours.err" | tail -1 | tee -a "$OUT/cpu_bench.jsonl"
  done
  timeout 240 /tmp/peer-cpu/llama.cpp-*/build/bin/llama-bench -m $M -t $(nproc),$(( $(nproc) / 2 )) \
    -p 512 -n 16 -r 2 -o md 2>"$L/cpu_peer.err" | tee "$OUT/cpu_peer_bench.md"
  # Its prompt at the settings that are best on GPUs too, so the better of the two is compared.
  timeout 120 /tmp/peer-cpu/llama.cpp-*/build/bin/llama-bench -m $M -t $(nproc),$(( $(nproc) / 2 )) \
    -p 512 -n 0 -r 2 -fa 1 -ub 2048 -o md 2>>"$L/cpu_peer.err" | grep pp512 | tee -a "$OUT/cpu_peer_bench.md"
fi
if has sanitize; then
  T=/tmp/models/tiny36.gguf
  mkdir -p /tmp/models
  [[ -f $T ]] || $B synth --preset tiny-qwen3.6-moe --quant q4_k_m --out $T >/dev/null 2>&1
  # Batch 12: the decode products take the integer tensor-core kernels (9..64 rows).
  for batch in 3 12; do
    for tool in memcheck racecheck; do
      timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 $B bench --model $T \
        --device cuda:0 --prompt-tokens 40 --gen-tokens 6 --batch $batch >"$L/sanitize_${tool}_$batch.log" 2>&1
      echo "compute-sanitizer $tool batch $batch exit $?: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$L/sanitize_${tool}_$batch.log" | tail -1)"
    done
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
      >"$L/ncu_$name.csv" 2>"$L/ncu_$name.err"
    echo "== $name (exit $?)"; python3 tests/gpu/ncu_summary.py "$L/ncu_$name.csv" 40
  done
fi
