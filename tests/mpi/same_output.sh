#!/usr/bin/env bash
# table, search --refine 5, simulate --seeds and validate --runs give the same bytes on 2 MPI ranks as in one
# process (issue #19: rank 0 gathers every unit's result and writes); a rank that dies fails the
# run without an output file; bad input stops every rank with exit 2 and one message.
# Usage: same_output.sh STEPCAST MPIEXEC
set -u
exe=$1
mpi=(timeout 120 "$2" -np 2 --oversubscribe --allow-run-as-root)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# Runs the command alone and on 2 ranks, each writing with -o, and compares the files.
same() {
  local name=$1; shift
  "$exe" "$@" -o "$tmp/$name.one" || fail "$name: single process exited $?"
  "${mpi[@]}" "$exe" "$@" -o "$tmp/$name.two" || fail "$name: 2 ranks exited $?"
  if cmp -s "$tmp/$name.one" "$tmp/$name.two"; then echo "ok: $name"; else fail "$name differs on 2 ranks"; diff "$tmp/$name.one" "$tmp/$name.two" | head -20; fi
}

# 2 workloads x 2 clusters x 3 GPU counts = 12 cells, the best 2 plans of each simulated; the 24
# GPUs of a p4d cluster do not fill whole nodes (a skipped cell travels too).
same "table --refine 2" table --workloads workloads/mpt-125m.json,workloads/llama2-7b.json \
  --topologies topologies/p4d-24xlarge.json,topologies/dgx-h100.json --gpus 8,16,24 --global-batch 256 --seq 2048 \
  --refine 2 --threads 1 --format json
same "search --refine 5" search --workload workloads/llama2-13b.json --topology topologies/p4d-24xlarge.json --nodes 4 \
  --global-batch 512 --seq 4096 --refine 5 --threads 1 --format json
same "validate --runs --engine des" validate --runs tests/data/runs/llm_foundry_mpt.csv --engine des --json
same "simulate --seeds 6" simulate --workload workloads/llama2-7b.json --topology topologies/dgx-h100.json --nodes 2 \
  --plan fsdp=16,mbs=1 --global-batch 256 --seq 2048 --straggler step-cv=0.05 --seeds 6 --json
same "validate --runs" validate --runs tests/data/runs/vtrain_single_node_a100.csv --json

# A rank killed while it works: the job fails and rank 0 writes nothing.
out="$tmp/killed.json"
"${mpi[@]}" bash -c 'if [ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ]; then (sleep 0.5; kill -9 $$) & fi; exec "$0" "$@"' \
  "$exe" table --workloads workloads/llama2-70b.json,workloads/gpt3-175b.json --topologies topologies/dgx-h100.json \
  --gpus 64,128,256,512 --global-batch 1024 --seq 4096 --refine 10 --threads 1 -o "$out" >/dev/null 2>"$tmp/killed.err"
code=$?
if [ $code -eq 0 ]; then fail "a killed rank left exit 0"; else echo "ok: killed rank fails the run (exit $code)"; fi
if [ -e "$out" ] || compgen -G "$tmp/killed.json*" >/dev/null; then fail "a killed rank left an output file"; else echo "ok: no output file"; fi

# Bad input: every rank stops before work is dealt, exit 2, the message printed once.
"${mpi[@]}" "$exe" table --workloads workloads/no-such.json --topologies topologies/dgx-h100.json --gpus 8 \
  --global-batch 64 -o "$tmp/bad.json" >/dev/null 2>"$tmp/bad.err"
code=$?
[ $code -eq 2 ] && echo "ok: bad input exits 2" || fail "bad input exited $code, not 2"
n=$(grep -c "stepcast: error:" "$tmp/bad.err")
[ "$n" -eq 1 ] && echo "ok: one error message" || { fail "bad input printed $n error messages"; cat "$tmp/bad.err"; }
[ -e "$tmp/bad.json" ] && fail "bad input left an output file"
exit $status
