#!/usr/bin/env bash
# GPU-machine check: builds kernels, kernel tests and fluxmap-bench only (no GLib there), runs the
# kernel tests and every family's bench; full logs to $OUT, a short summary on stdout.
#   bench/device-check.sh [FAMILY...]    (default: lsi flim mcml dce oct)
set -uo pipefail
out=${OUT:-$PWD/device-check-logs}
mkdir -p "$out"
families=("$@")
[ ${#families[@]} -eq 0 ] && families=(lsi flim mcml dce oct)
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
  git rev-parse HEAD 2>/dev/null || echo "(no git: working tree copy)"
  rm -rf build-gpu
  meson setup build-gpu -Dgui=disabled -Dcuda=enabled -Dsm90_only=true 2>&1 | tail -12
  meson compile -C build-gpu 2>&1 | grep -iE 'warning|error|FAILED'
} > "$out/build.log" 2>&1
tail -20 "$out/build.log"
{
  meson test -C build-gpu --suite kernels --print-errorlogs 2>&1
  for t in build-gpu/tests/kernels/test-kernels-*; do echo "== $t"; "$t"; done
} > "$out/test.log" 2>&1
grep -E '^ *[0-9]+/[0-9]+ |^Ok:|^Fail:|^not ok' "$out/test.log"
for f in "${families[@]}"; do
  build-gpu/bench/fluxmap-bench "$f" > "$out/bench-$f.txt" 2>&1
  echo "== bench $f: exit $?, $(wc -l < "$out/bench-$f.txt") lines"
done
