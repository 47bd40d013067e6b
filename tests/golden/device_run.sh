#!/bin/bash
# Run on the accelerator machine from the repository root: builds the golden data into
# $OUT/golden.tar.xz, then builds the engine without Qt and runs the gpu tests.
# Debian packages the build needs (tests/gpu/device_deps.sh lists them)
# travel as .deb files in .device-carry/debs and are unpacked into /tmp/deps.
export PYTHONUNBUFFERED=1
set -o pipefail
G=/tmp/golden
rm -rf $G
timeout 240 python3 tests/golden/make_golden.py --out $G 2>&1 | tee $OUT/golden_log.txt
echo "make_golden exit: $?"
(cd $G && tar cJf $OUT/golden.tar.xz .) && ls -la $OUT
du -sh $G/* 2>/dev/null

source tests/gpu/device_deps.sh
{
  timeout 300 bash -c "cmake -S . -B build-dev -G Ninja -DCW_ENGINE_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=/tmp/deps/usr && ninja -C build-dev -j16 -k 0"
  echo "build exit: $?"
  ctest --test-dir build-dev -L gpu --output-on-failure
  echo "ctest gpu exit: $?"
} 2>&1 | tee $OUT/build_log.txt | tail -150
