#!/usr/bin/env bash
# The same inputs give byte-identical output, text and JSON, across runs and thread counts, for
# predict, simulate and search (STYLE.md B6). Usage: deterministic.sh STEPCAST
set -u
exe=$1
status=0
same() {
  local a b
  a=$("$exe" "${@:2}" 2>&1)
  b=$("$exe" "${@:2}" 2>&1)
  if [ "$a" != "$b" ]; then echo "FAIL: $1 differs between two runs"; status=1; else echo "ok: $1"; fi
}
pred=(--workload workloads/llama2-7b.json --topology topologies/p4d-24xlarge.json --nodes 2
      --plan "fsdp=16,flash=on" --global-batch 256 --seq 4096)
same "predict text" predict "${pred[@]}" --explain
same "predict json" predict "${pred[@]}" --json
same "simulate json, seeded noise" simulate "${pred[@]}" --straggler "cv=0.05" --seed 7 --json
same "simulate text" simulate "${pred[@]}"
search=(search --workload workloads/llama2-13b.json --topology topologies/p4d-24xlarge.json --nodes 4
        --global-batch 512 --seq 4096 --json)
one=$("$exe" "${search[@]}" --threads 1 2>&1)
two=$("$exe" "${search[@]}" --threads 2 2>&1)
if [ "$one" != "$two" ]; then echo "FAIL: search differs between 1 and 2 threads"; status=1; else echo "ok: search threads"; fi
exit $status
