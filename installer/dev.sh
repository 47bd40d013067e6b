#!/usr/bin/env bash
# One entry for developers and CI:
#   installer/dev.sh run       install what is missing, build Release, review the sample contract
#   installer/dev.sh test      install what is missing, build, run the whole test suite (ctest)
#   installer/dev.sh sanitize  clang Debug build with ASan+UBSan, run the engine and app tests under it
#   installer/dev.sh fuzz [S]  build the libFuzzer targets in that build and run each for S seconds
#   installer/dev.sh sanitize-build   that build alone, no tests (CI runs it beside the test stage)
# Idempotent: a second run rebuilds only what changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mode=${1:-test}
jobs=${CW_JOBS:-$(nproc)}
cuda_arch=${CW_CUDA_ARCHITECTURES:-}

configure() { # dir, extra cmake args...
  local dir=$1; shift
  local args=(-S . -B "$dir" -G Ninja "$@")
  [[ -n "$cuda_arch" ]] && args+=("-DCMAKE_CUDA_ARCHITECTURES=$cuda_arch")
  if [[ ! -f "$dir/build.ninja" ]]; then
    cmake "${args[@]}" >/dev/null
  fi
}

# The sanitizer and fuzz stages' build (clang: libFuzzer is clang's). CW_SANITIZE_DEBUG_FLAGS
# replaces Debug's -g: CI passes -g0, which took a Qt-heavy file from 8.7-10.2 s to 5.6 s
# (-gline-tables-only: 7.9-9.6 s); its reports then name functions without lines.
configure_sanitized() {
  local debug=${CW_SANITIZE_DEBUG_FLAGS:--g}
  configure build-asan -DCMAKE_BUILD_TYPE=Debug -DCW_SANITIZE=ON -DCW_FUZZ=ON -DCW_WITH_CUDA=OFF \
    -DCW_BUILD_GUI=OFF -DCW_BUILD_BENCHES=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    "-DCMAKE_C_FLAGS_DEBUG=$debug" "-DCMAKE_CXX_FLAGS_DEBUG=$debug"
}

# After a failed ctest: the failing assertions of every test, last, where a log's tail shows
# them (the full output of a long Qt test pushes its one FAIL! line out of view).
failure_digest() { # build dir
  echo "== failed assertions (from $1/Testing/Temporary/LastTest.log)"
  grep -E 'FAIL!|^   Loc:|\[  FAILED  \]|: Failure$|^Expected|actual:|Which is:|ERROR: AddressSanitizer|runtime error:' \
    "$1/Testing/Temporary/LastTest.log" | cut -c1-400 | tail -60 || true
}

case "$mode" in
  run)
    installer/install-deps.sh
    configure build -DCMAKE_BUILD_TYPE=Release
    cmake --build build -j "$jobs" >&2 # progress on stderr: stdout is the report
    sample=${2:-resources/samples/sample-contract.pdf}
    exec build/app/clausewright-cli review "$sample" --heads fast --format md
    ;;
  test)
    installer/install-deps.sh
    configure build -DCMAKE_BUILD_TYPE=Release
    cmake --build build -j "$jobs"
    ctest --test-dir build --output-on-failure -j "$jobs" || { failure_digest build; exit 8; }
    ;;
  sanitize-build)
    CW_WITH_FUZZ=1 installer/install-deps.sh
    configure_sanitized
    cmake --build build-asan -j "$jobs"
    ;;
  sanitize)
    CW_WITH_FUZZ=1 installer/install-deps.sh
    # One clang Debug build serves this stage and the fuzz stage: every object is built once
    # with ASan+UBSan and libFuzzer's coverage hooks, the tests link it, and the fuzz targets
    # link the same libraries (two builds took ~30 of CI's minutes; this one ~16). The window
    # and its tests are left out: the stage runs the engine and app tests only.
    configure_sanitized
    cmake --build build-asan -j "$jobs"
    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --test-dir build-asan --output-on-failure -j "$jobs" -L 'engine|app' -LE 'slow' \
      || { failure_digest build-asan; exit 8; }
    ;;
  fuzz)
    CW_WITH_FUZZ=1 installer/install-deps.sh
    seconds=${2:-60}
    configure_sanitized
    cmake --build build-asan -j "$jobs" --target cw_fuzz_all
    # The fuzzers run side by side, one per core: each is a single process.
    targets=()
    for target in build-asan/tests/fuzz/*/fuzz_*; do
      [[ -x "$target" ]] && targets+=("$target")
    done
    run_fuzzer() { # target: exit status in $work.status, output in $work.log
      local target=$1 name corpus_src work
      name=$(basename "$target")
      corpus_src="tests/fuzz/$(basename "$(dirname "$target")")/corpus"
      work="build-asan/corpus/$name"
      mkdir -p "$work"
      if "$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 "$work" \
        "$corpus_src" >"$work.log" 2>&1; then
        echo 0 >"$work.status"
      else
        echo $? >"$work.status"
      fi
    }
    for target in "${targets[@]}"; do
      while (( $(jobs -rp | wc -l) >= jobs )); do wait -n || true; done
      run_fuzzer "$target" &
    done
    wait
    status=0
    for target in "${targets[@]}"; do
      name=$(basename "$target")
      work="build-asan/corpus/$name"
      echo "== $name for ${seconds}s"
      if [[ "$(cat "$work.status")" != 0 ]]; then
        tail -n 40 "$work.log"
        status=1
      else
        tail -n 2 "$work.log"
      fi
    done
    exit $status
    ;;
  *)
    echo "usage: installer/dev.sh run|test|sanitize|sanitize-build|fuzz [seconds]" >&2
    exit 2
    ;;
esac
