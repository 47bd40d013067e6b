#!/bin/bash
# On the accelerator machine, from the repository root: builds the engine without Qt (the
# Debian packages it needs travel as .deb files in .device-carry/debs), runs the gpu tests and,
# with "bench", measures clausewright-cli bench beside llama.cpp (.device-carry/peer) on one
# synthetic Qwen3.6-35B-A3B Q4_K_M file. Results land in $OUT.
#   tests/gpu/run_on_device.sh [build] [test] [bench] [peer]
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

if has peer; then # llama.cpp builds beside ours (about 4.5 minutes)
  (mkdir -p /tmp/peer && tar -xJf .device-carry/peer/llama.cpp-*.tar.xz -C /tmp/peer \
    && cd /tmp/peer/llama.cpp-* \
    && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_CURL=OFF \
      -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
      -DLLAMA_BUILD_UI=OFF -DLLAMA_BUILD_HTML=OFF -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null \
    && ninja -C build -j8 llama-bench llama-batched-bench >"$OUT/peer_build.log" 2>&1; echo "peer build exit $?") &
  peer_pid=$!
fi
if has build; then
  start=$(date +%s)
  if [[ ! -f build-dev/build.ninja ]]; then
    cmake -S . -B build-dev -G Ninja -DCW_ENGINE_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DCW_BUILD_BENCHES=OFF -DCMAKE_PREFIX_PATH=/tmp/deps/usr >"$OUT/configure.log" 2>&1 \
      || { tail -30 "$OUT/configure.log"; exit 1; }
  fi
  ninja -C build-dev -j16 -k 0 >"$OUT/build.log" 2>&1
  echo "build exit $? in $(( $(date +%s) - start )) s"
  grep -E "error|FAILED" "$OUT/build.log" | head -40
fi
if has test; then
  ctest --test-dir build-dev -L gpu --output-on-failure --timeout 240 >"$OUT/ctest_gpu.log" 2>&1
  echo "ctest gpu exit $?"
  grep -E "^[0-9 ]+/[0-9]+ Test|tests passed|FAILED|Failed|error:|max \|error\||error [0-9]|of max|identical|same" "$OUT/ctest_gpu.log" | tail -80
fi
if has bench; then
  M=/tmp/models/q36.gguf
  [[ -f $M ]] || build-dev/app/clausewright-cli synth --preset qwen3.6-35b-a3b --quant q4_k_m --out $M >/dev/null
  export CW_COMMIT=${CW_COMMIT:-unknown}
  B=build-dev/app/clausewright-cli
  : >"$OUT/bench.jsonl"
  for args in "--prompt-tokens 512 --gen-tokens 128 --batch 1" "--prompt-tokens 8192 --gen-tokens 16 --batch 1" \
      "--prompt-tokens 28000 --gen-tokens 4 --batch 1" "--prompt-tokens 512 --gen-tokens 64 --batch 32"; do
    timeout 200 $B bench --model $M --device cuda:0 $args --repeat 2 2>>"$OUT/bench.err" | tee -a "$OUT/bench.jsonl"
  done
  tail -5 "$OUT/bench.err"
fi
if has peer; then
  wait $peer_pid
  L=$(echo /tmp/peer/llama.cpp-*/build/bin)
  timeout 240 $L/llama-bench -m /tmp/models/q36.gguf -ngl 99 -fa 1 -p 512,8192 -ub 2048 -n 128 -r 2 2>&1 | tee "$OUT/peer_bench.txt" | grep -E "model|q4|tg|pp"
  timeout 200 $L/llama-batched-bench -m /tmp/models/q36.gguf -ngl 99 -fa on -c 42000 -ub 2048 -npp 512 -ntg 128 -npl 1,32 2>&1 | tee "$OUT/peer_batched.txt" | tail -6
fi
