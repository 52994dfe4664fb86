#!/usr/bin/env bash
# GPU-machine check: builds kernels, kernel tests and fluxmap-bench only, runs both; logs to $OUT.
#   bench/device-check.sh [--quick]    (run from the repository root on the machine with the GPU)
set -uo pipefail
out=${OUT:-$PWD/device-check-logs}
mkdir -p "$out"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  git rev-parse HEAD 2>/dev/null
} | tee "$out/env.txt"
rm -rf build-gpu
meson setup build-gpu -Dgui=disabled -Dcuda=enabled 2>&1 | tee "$out/setup.log" | tail -12 &&
  meson compile -C build-gpu 2>&1 | tee "$out/compile.log" | grep -iE 'warning|error' ;
meson test -C build-gpu --suite kernels --print-errorlogs 2>&1 | tee "$out/test.log" | tail -15
for t in build-gpu/tests/kernels/test-kernels-*; do "$t"; done > "$out/tests-verbose.log" 2>&1
grep -E '^(not ok|# )' "$out/tests-verbose.log"
build-gpu/bench/fluxmap-bench lsi "$@" 2>&1 | tee "$out/bench.txt"
