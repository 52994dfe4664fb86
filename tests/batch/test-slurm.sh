#!/usr/bin/env bash
# A batch on a real Slurm on this machine (tests/batch/slurm-localhost.sh): six items as a job
# array of six tasks, at most two at a time, one task cancelled before it runs; the merge job
# lists that task as missing, resubmitting it (in the form merge prints) completes the batch in
# the catalogue, and a second merge changes nothing; then the one command (batch -o RUN/ METHOD
# FILES --slurm) plans, submits and merges two more. Slurm is stopped by its pid files at the end.
#   test-slurm.sh FLUXMAP_CLI
set -euo pipefail
cli=$(readlink -f "$1")
here=$(dirname "$(readlink -f "$0")")
harness="$here/slurm-localhost.sh"

work=$(mktemp -d /tmp/fluxmap-slurm-test.XXXXXX)
slurm="$work/slurm"
run="$work/batch 1%x" # a space and a '%' that the scripts' directives must keep as they are
cleanup() {
  "$harness" stop "$slurm" || true
  [ -n "${KEEP_SLURM_TEST:-}" ] || rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  for log in "$run"/slurm/*.log; do
    [ -f "$log" ] && { echo "--- $log" >&2; cat "$log" >&2; }
  done
  exit 1
}

# Waits (at most 60 s) until none of the given jobs is pending or running.
wait_jobs() {
  local left
  for _ in $(seq 1 300); do
    left=$(squeue -h -j "$(IFS=,; echo "$*")" -o %i 2>/dev/null || true)
    [ -z "$left" ] && return 0
    sleep 0.2
  done
  fail "jobs $* still queued after 60 s: $(squeue 2>&1)"
}

# The state Slurm gives a job or array task ("COMPLETED", "CANCELLED", ...).
job_state() {
  scontrol show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -n 1
}

# The runs in the catalogue at $FLUXMAP_DATA_DIR (only the batch's) as 'input<TAB>status' lines,
# sorted: an item merged twice would show twice.
catalogue_items() {
  "$cli" catalogue list --json | python3 -c '
import json, os, sys
runs = json.load(sys.stdin)["runs"]
for name, status in sorted((os.path.basename(r["dataset"] or ""), r["status"]) for r in runs):
    print(f"{name}\t{status}")'
}
catalogue_inputs() { catalogue_items | cut -f1 | tr '\n' ' '; }

"$harness" start "$slurm" || fail "Slurm did not start on this machine (see above)"
export SLURM_CONF="$slurm/slurm.conf"
export FLUXMAP_DATA_DIR="$work/catalogue"

# six small speckle stacks, one method over them
mkdir -p "$work/inputs"
for i in 0 1 2 3 4 5; do
  "$cli" simulate lsi --width=32 --height=24 --frames=4 --seed=$((i + 1)) \
    -o "$work/inputs/stack-$i.tif" >/dev/null
done
"$cli" batch plan -o "$run" lsi.spatial "$work"/inputs/stack-*.tif >/dev/null ||
  fail "batch plan"

# usage errors: exit 2 with the reason, nothing submitted
expect_usage() {
  local out code=0
  out=$("$cli" batch submit "$run" "$@" 2>&1) || code=$?
  [ "$code" = 2 ] || fail "batch submit $*: exit $code, not 2: $out"
}
expect_usage --dry-run                   # no --slurm
expect_usage --slurm --tasks 6 --dry-run # six tasks: 0 to 5
expect_usage --slurm --tasks 2-1 --dry-run
expect_usage --slurm --ntasks 7 --dry-run # more tasks than items
out=$(PATH=/nonexistent "$cli" batch submit "$run" --slurm 2>&1) && fail "submitted without sbatch"
grep -q sbatch <<<"$out" || fail "without sbatch: $out"

# --dry-run prints what would be submitted and submits nothing
dry=$("$cli" batch submit "$run" --slurm --array-limit 2 --gpus-per-task 1 --dry-run)
grep -qx '#SBATCH --array=0-5%2' <<<"$dry" || fail "dry run: no '--array=0-5%2' in: $dry"
grep -qx '#SBATCH --gres=gpu:1' <<<"$dry" || fail "dry run: no '--gres=gpu:1' in: $dry"
grep -qxF "#SBATCH --output=\"$work/batch 1%%x/slurm/task-%a-%A.log\"" <<<"$dry" ||
  fail "dry run: the task logs' --output is not quoted with its % doubled: $dry"
# with GPUs the task's backend is run's default (auto: the GPU Slurm gives it)
grep -q -- "batch run '$run' --task \"\$SLURM_ARRAY_TASK_ID\" --ntasks 6\$" <<<"$dry" ||
  fail "dry run: the task line is not there: $dry"
[ -z "$(squeue -h)" ] || fail "--dry-run submitted a job: $(squeue)"

# Held at submission (sbatch reads SBATCH_HOLD), so that task 3 is surely cancelled before it
# runs: the injected failure, a task that never writes its shard.
out=$(SBATCH_HOLD=1 "$cli" batch submit "$run" --slurm --array-limit 2) || fail "submit: $out"
echo "$out"
array=$(sed -n 's/^array job \([0-9]*\):.*/\1/p' <<<"$out")
merge=$(sed -n 's/^merge job \([0-9]*\):.*/\1/p' <<<"$out")
[ -n "$array" ] && [ -n "$merge" ] || fail "submit printed no job ids: $out"
# without GPUs the tasks run on the CPU, not on a GPU Slurm did not give them
grep -q -- "--ntasks 6 --backend=cpu\$" "$run/slurm/array.sbatch" ||
  fail "the task line has no --backend=cpu: $(cat "$run/slurm/array.sbatch")"
scontrol show job "$array" | grep -q 'ArrayTaskThrottle=2' ||
  fail "the array is not throttled to 2: $(scontrol show job "$array")"
scancel "${array}_3"
scontrol release "$array"
scontrol release "$merge"
wait_jobs "$array" "$merge"

for t in 0 1 2 4 5; do
  [ "$(job_state "${array}_$t")" = COMPLETED ] || fail "task $t: $(job_state "${array}_$t")"
done
# a pending array task cancelled leaves no record of its own (or one that says CANCELLED)
state3=$(job_state "${array}_3" 2>/dev/null || true)
[ -z "$state3" ] || [ "$state3" = CANCELLED ] || fail "task 3: $state3"
[ ! -e "$run/slurm/task-3-$array.log" ] || fail "task 3 ran: $(cat "$run/slurm/task-3-$array.log")"
# merge exits 1 while tasks are missing: Slurm says the merge job failed, with that exit code
scontrol show job "$merge" | grep -q 'ExitCode=1:0' || fail "merge job: $(scontrol show job "$merge")"
merge_log="$run/slurm/merge-$merge.log"
missing=$(sed -n 's/^missing tasks: \([0-9,-]*\).*/\1/p' "$merge_log")
[ "$missing" = 3 ] || fail "the merge lists missing tasks '$missing', not 3: $(cat "$merge_log")"
[ "$(catalogue_inputs)" = "stack-0.tif stack-1.tif stack-2.tif stack-4.tif stack-5.tif " ] ||
  fail "catalogue after the first merge: $(catalogue_items)"

# the missing task resubmitted as merge printed it
out=$("$cli" batch submit "$run" --slurm --tasks "$missing") || fail "resubmit: $out"
echo "$out"
array2=$(sed -n 's/^array job \([0-9]*\):.*/\1/p' <<<"$out")
merge2=$(sed -n 's/^merge job \([0-9]*\):.*/\1/p' <<<"$out")
grep -qx '#SBATCH --array=3' "$run/slurm/array.sbatch" || fail "resubmitted array: $(cat "$run/slurm/array.sbatch")"
wait_jobs "$array2" "$merge2"
[ "$(job_state "${array2}_3")" = COMPLETED ] || fail "resubmitted task 3: $(job_state "${array2}_3")"
[ "$(job_state "$merge2")" = COMPLETED ] || fail "second merge job: $(job_state "$merge2")"
grep -qx 'missing tasks: none' "$run/slurm/merge-$merge2.log" ||
  fail "tasks still missing: $(cat "$run/slurm/merge-$merge2.log")"
after=$(catalogue_items)
[ "$(catalogue_inputs)" = "stack-0.tif stack-1.tif stack-2.tif stack-3.tif stack-4.tif stack-5.tif " ] ||
  fail "catalogue after the resubmission: $after"
[ "$(cut -f2 <<<"$after" | sort -u)" = done ] || fail "runs not done: $after"

# a second merge changes nothing
"$cli" batch merge "$run" >"$work/merge3.txt" || fail "merge: $(cat "$work/merge3.txt")"
grep -q ' 0 runs added, 0 replaced, 6 there already' "$work/merge3.txt" ||
  fail "a second merge: $(cat "$work/merge3.txt")"
[ "$(catalogue_items)" = "$after" ] || fail "a second merge changed the catalogue: $(catalogue_items)"

# one command with --slurm: planned, submitted, and merged into the catalogue by its merge job
out=$("$cli" batch -o "$work/one command" lsi.spatial "$work/inputs/stack-0.tif" \
  "$work/inputs/stack-1.tif" --slurm) || fail "batch -o ... --slurm: $out"
echo "$out"
array3=$(sed -n 's/^array job \([0-9]*\):.*/\1/p' <<<"$out")
merge3=$(sed -n 's/^merge job \([0-9]*\):.*/\1/p' <<<"$out")
[ -n "$array3" ] && [ -n "$merge3" ] || fail "the one command printed no job ids: $out"
wait_jobs "$array3" "$merge3"
[ "$(job_state "$merge3")" = COMPLETED ] || fail "the one command's merge job: $(job_state "$merge3")"
runs=$("$cli" catalogue list --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["runs"]))')
[ "$runs" = 8 ] || fail "after the one command the catalogue holds $runs runs, not 8: $(catalogue_items)"

# stopped by the pid files: the daemons are gone
pids=$(cat "$slurm/slurmctld.pid" "$slurm/slurmd.pid" "$slurm/munge/munged.pid")
"$harness" stop "$slurm"
for pid in $pids; do
  if kill -0 "$pid" 2>/dev/null; then fail "process $pid still runs after stop"; fi
done
echo "ok: 6 items, task 3 cancelled, listed missing, resubmitted, merged once; one command with --slurm"
