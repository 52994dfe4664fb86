#!/usr/bin/env bash
# One device call for the changes that no GPU has run yet (third session of 2026-11-23, when no
# device was lent): builds build-gpu, runs the CUDA kernel tests, then times the open targets'
# kernels and their build-time variants; full logs to $OUT, a short summary on stdout.
#   bench/device-variants.sh        (~6-8 minutes on an H100)
# Then pick the winners, make them the defaults, and run bench/device-check.sh flim dce mcml for
# the figures of bench/RESULTS.md.
set -uo pipefail
out=${OUT:-$PWD/device-variants-logs}
mkdir -p "$out"
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
  rm -rf build-gpu
  meson setup build-gpu -Dgui=disabled -Dcuda=enabled -Dsm90_only=true 2>&1 | tail -3
  ninja -C build-gpu bench/fluxmap-bench tests/kernels/test-kernels-flim-cuda \
    tests/kernels/test-kernels-flim-fit tests/kernels/test-kernels-dce-cuda \
    tests/kernels/test-kernels-mcml-cuda 2>&1 | grep -iE 'warning|error|FAILED'
  # Build-time switches, one CUDA file each (bench/variant.sh).
  bash bench/variant.sh build-gpu mcml-fast mcml_cuda.cu -DFM_MCML_FAST_MATH=1
  bash bench/variant.sh build-gpu mcml-mb3 mcml_cuda.cu -DMCML_MIN_BLOCKS=3
  bash bench/variant.sh build-gpu mcml-mb4 mcml_cuda.cu -DMCML_MIN_BLOCKS=4
  bash bench/variant.sh build-gpu dce-mb4 dce_cuda.cu -DFM_DCE_WARP_MIN_BLOCKS=4 \
    -DFM_DCE_WARP_DENSE_MIN_BLOCKS=7
} > "$out/build.log" 2>&1
tail -8 "$out/build.log"
run() { # name, command...: the command's output to $out/name.txt, its last lines here
  local name=$1
  shift
  echo "== $name: $*"
  "$@" > "$out/$name.txt" 2>&1
  echo "   exit $?"
}
# Correctness first: the CUDA kernels against the CPU twin.
run test-flim-cuda build-gpu/tests/kernels/test-kernels-flim-cuda
run test-flim-fit build-gpu/tests/kernels/test-kernels-flim-fit
run test-dce-cuda build-gpu/tests/kernels/test-kernels-dce-cuda
run test-mcml-cuda build-gpu/tests/kernels/test-kernels-mcml-cuda
grep -hE '^not ok|^1\.\.' "$out"/test-*.txt
# FLIM fits on the GPU only, per group width (8 is the default; 4, 16, 32 for comparison).
run flim-fits env FM_BENCH_FLIM_FITS=8,4,16,32 build-gpu/bench/fluxmap-bench flim
# DCE whole liver: the default and dense warp layouts, then 16 and 28 warps per SM.
run dce-liver env FLUXMAP_BENCH_DCE_ROWS=liver FLUXMAP_BENCH_DCE_LAYOUTS=warp \
  build-gpu/bench/fluxmap-bench dce
run dce-liver-mb4 env FLUXMAP_BENCH_DCE_ROWS=liver FLUXMAP_BENCH_DCE_LAYOUTS=warp \
  build-gpu/dce-mb4/fluxmap-bench dce
# MCML: the default (xoshiro128** streams), fast math, and the register budget for 3 or 4
# blocks per SM.
run mcml build-gpu/bench/fluxmap-bench mcml
run mcml-fast build-gpu/mcml-fast/fluxmap-bench mcml
run mcml-mb3 build-gpu/mcml-mb3/fluxmap-bench mcml --quick
run mcml-mb4 build-gpu/mcml-mb4/fluxmap-bench mcml --quick
