#!/usr/bin/env bash
# `calibrate` then `collective --calibration`: the calibrated prediction of a measured point is
# closer to the measurement than the uncalibrated one, and within 3%. The measurements are the
# public H100 8-GPU nccl-tests log's all_reduce_perf rows (out-of-place time):
#   line 23: 33554432 B in 182.87 us;  line 28: 1073741824 B in 4000.82 us.
# Usage: calibration_roundtrip.sh STEPCAST SIZE MEASURED_SECONDS [collective arguments...]
set -eu
exe=$1 size=$2 measured=$3
shift 3
log=tests/data/nccl-tests/nccl-tests_5coll_H100_1node_8gpu_xxrjun.txt
cal=$(mktemp --suffix=.json)
trap 'rm -f "$cal"' EXIT
"$exe" calibrate --measured "$log" --topology topologies/dgx-h100.json --nodes 1 --min-size 1MiB -o "$cal" >/dev/null
time_of() {
  # The top-level "time_s" (two-space indent): candidates, where listed, are nested deeper.
  "$exe" collective --op all-reduce --size "$size" --topology topologies/dgx-h100.json --nodes 1 --json "$@" |
    sed -n 's/^  "time_s": \([0-9.eE+-]*\).*/\1/p'
}
before=$(time_of "$@")
after=$(time_of "$@" --calibration "$cal")
awk -v m="$measured" -v b="$before" -v a="$after" 'BEGIN {
  eb = (b - m) / m; if (eb < 0) eb = -eb
  ea = (a - m) / m; if (ea < 0) ea = -ea
  printf "measured %.6g s, uncalibrated %.6g s (%.2f%%), calibrated %.6g s (%.2f%%)\n", m, b, 100 * eb, a, 100 * ea
  exit !(ea < eb && ea < 0.03)
}'
