#!/usr/bin/env bash
# Extreme but valid inputs (1 GPU, 65,536 GPUs, 1-byte and 1-TiB messages, a 10-trillion-parameter
# model) give finite figures, and exit 0, or 3 with a reason when a plan cannot fit: never NaN,
# infinity, a crash or an internal error. Usage: extreme_inputs.sh STEPCAST
set -u
exe=$1
status=0
check() {
  local out rc
  out=$("$exe" "$@" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then
    echo "FAIL (exit $rc): stepcast $*"; echo "$out" | head -n 20; status=1; return
  fi
  if grep -qiwE 'nan|-?inf(inity)?' <<<"$out"; then
    echo "FAIL (NaN or infinity in the output): stepcast $*"; grep -iwE 'nan|-?inf(inity)?' <<<"$out" | head -n 5
    status=1; return
  fi
  echo "ok (exit $rc): stepcast $*"
}
ten_t=tests/data/workloads/dense-10t.json
check collective --op all-reduce --size "1 B" --topology topologies/flat-400gbps.json --nodes 1 --json
check collective --op all-reduce --size "1 TiB" --topology topologies/flat-400gbps.json --nodes 65536 --json
check collective --op all-to-all --size "1 B" --topology topologies/p4d-24xlarge.json --nodes 8192 --json
check collective --op all-reduce --algorithm hierarchical --size "1 TiB" --topology topologies/dgx-h100.json --nodes 8192 --json
check collective --op all-reduce --algorithm tree --sizes "1B:1TiB" --topology topologies/p5-48xlarge.json --nodes 8192
check memory --workload workloads/llama3-8b.json --topology topologies/flat-400gbps.json --nodes 1 --plan dp=1 --json
check predict --workload workloads/llama3-8b.json --topology topologies/flat-400gbps.json --nodes 1 --plan dp=1 \
  --global-batch 8 --seq 2048 --json
check predict --workload "$ten_t" --topology topologies/dgx-h100.json --nodes 8192 \
  --plan "tp=8,pp=64,fsdp=128,recompute=full" --global-batch 2048 --seq 2048 --json
check memory --workload "$ten_t" --topology topologies/dgx-h100.json --nodes 1 --plan "tp=8" --json
check simulate --workload workloads/llama3-8b.json --topology topologies/flat-400gbps.json --nodes 1 --plan dp=1 \
  --global-batch 8 --seq 2048 --json
check simulate --workload "$ten_t" --topology topologies/dgx-h100.json --nodes 8192 \
  --plan "tp=8,pp=64,dp=128,recompute=full" --global-batch 2048 --seq 2048 --json
check resilience --workload "$ten_t" --topology topologies/dgx-h100.json --nodes 8192 \
  --plan "tp=8,pp=64,fsdp=128,recompute=full" --storage "2 GB/s" --mtbf "24 h" --json
exit $status
