#!/usr/bin/env bash
# The programs carry no engine code of their own: each needs libcw_engine.so, and only that
# library holds CUDA device code (.nv_fatbin). Before, every program embedded its own copy.
#   check_shared_engine.sh ENGINE_LIBRARY WITH_CUDA(0|1) PROGRAM...
set -euo pipefail
library=$1 cuda=$2
shift 2
command -v readelf >/dev/null || { echo "readelf (binutils) is not installed"; exit 77; }
status=0
for program in "$@"; do
  if ! readelf -d "$program" | grep -q 'NEEDED.*\[libcw_engine\.so\]'; then
    echo "FAILED: $program does not load libcw_engine.so"; status=1
  fi
  if readelf -SW "$program" | grep -q '\.nv_fatbin'; then
    echo "FAILED: $program embeds CUDA device code of its own"; status=1
  fi
done
if [[ $cuda == 1 ]] && ! readelf -SW "$library" | grep -q '\.nv_fatbin'; then
  echo "FAILED: $library holds no CUDA device code in a CUDA build"; status=1
fi
[[ $status == 0 ]] && echo "the programs share $(basename "$library")"
exit $status
