#!/usr/bin/env bash
# Runs `stepcast ARGS...` and checks that every line of EXPECTED (comments '#' skipped) appears
# in its output, with runs of spaces squeezed, and that it exits with CODE (default 0).
# Usage: check_output.sh STEPCAST EXPECTED [--exit CODE] ARGS...
set -u
exe=$1 expected=$2
shift 2
want_rc=0
if [ "${1:-}" = "--exit" ]; then want_rc=$2; shift 2; fi
out=$("$exe" "$@" 2>&1)
rc=$?
if [ $rc -ne "$want_rc" ]; then
  echo "stepcast $* exited $rc, expected $want_rc:"; echo "$out"; exit 1
fi
squeezed=$(echo "$out" | tr -s ' ')
status=0
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  if ! grep -qF -- "$line" <<<"$squeezed"; then
    echo "missing: $line"
    status=1
  fi
done <"$expected"
[ $status -ne 0 ] && { echo "--- output of stepcast $* ---"; echo "$out"; }
exit $status
