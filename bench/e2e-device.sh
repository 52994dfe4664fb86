#!/bin/bash
# One device call: the CUDA tests of the resident and pinned paths, then the user's path on the
# bench workloads: fluxmap-cli on files (a fresh process per run, both backends) and fluxmap-bench
# e2e (first and warm runs through core, stage by stage). What it prints goes to $OUT/e2e-device.log.
# Here, first (devcarry/ is in .git/info/exclude):
#   ../shared/tools/device-bundle.sh build devcarry/bundle.tar.xz app/cli/fluxmap-cli bench/fluxmap-bench \
#     tests/kernels/test-kernels-{lsi,flim,oct,dce,mcml}-cuda tests/kernels/test-kernels-resident
#   git rev-parse HEAD > devcarry/commit.txt
# then the device call `bash bench/e2e-device.sh` with devcarry carried.
set -u
exec > >(tee "$OUT/e2e-device.log") 2>&1
tar xJf devcarry/bundle.tar.xz -C /tmp
export LD_LIBRARY_PATH=/tmp/bundle/lib:/usr/local/cuda/lib64
B=/tmp/bundle
echo "commit $(cat devcarry/commit.txt)"; date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc
for t in resident lsi-cuda flim-cuda oct-cuda dce-cuda mcml-cuda; do
  echo "== test-kernels-$t"; timeout 300 $B/test-kernels-$t 2>&1 | grep -vE "^ok |^# (spatial|temporal|spatio)"
done
mkdir -p /tmp/w && cd /tmp/w
export FLUXMAP_DATA_DIR=/tmp/w/cat
T="/usr/bin/time -f process_wall_s=%e_maxrss_kb=%M"
$T $B/fluxmap-cli simulate lsi --width 1392 --height 1040 --frames 30 -o lsi.tif >/dev/null
$T $B/fluxmap-cli simulate flim --width 512 --height 512 --bins 256 -o flim.sdt >/dev/null
$T $B/fluxmap-cli simulate oct --pixels 2048 --alines 1000 --bscans 50 -o oct.raw >/dev/null
$T $B/fluxmap-cli simulate flim --width 16 --height 16 --bins 256 -o flim-small.sdt >/dev/null
$T $B/fluxmap-cli simulate dce --width 256 --height 256 --slices 4 -o liver.nii >/dev/null
run() { # method input backend [extra]
  echo "== fluxmap-cli run $1 $2 --backend=$3 ${4:-} --profile"
  $T $B/fluxmap-cli run $1 $2 -o out-$1-$3 --backend=$3 ${4:-} --profile 2>&1 | grep -vE "^  (phasor|tau|intensity|mask|chi|amp|offset|a[12]|fraction|photons|iterations|converged|bcmm|background|ka|kp|kl|rss|residual|aic|fit)"
}
for be in cuda cpu; do
  for m in lsi.spatial lsi.temporal lsi.spatiotemporal; do run $m lsi.tif $be; done
  for m in flim.iem flim.cmm flim.rld flim.phasor flim.bcmm1 flim.bcmm2 flim.lsm flim.mle flim.ga; do run $m flim.sdt $be; done
  run oct.bscan oct.raw $be
  run dce.dual_input liver.nii $be "--roi liver.rois.json"
  echo "== fluxmap-cli run mcml.run --preset=skin7_600nm --photons=1000000 --backend=$be --profile"
  $T $B/fluxmap-cli run mcml.run --preset=skin7_600nm --photons=1000000 -o out-mcml-$be --backend=$be --profile 2>&1 | grep -vE "^  (a_rz|fluence|rd_|tt_)"
done
# The program's own share of peak memory for FLIM: the same methods on a 16 x 16 file.
for m in flim.phasor flim.lsm; do run $m flim-small.sdt cpu; done
echo "== fluxmap-bench e2e --backend=both --reps=5"
$B/fluxmap-bench e2e --backend=both --reps=5 --dir /tmp/e2e
