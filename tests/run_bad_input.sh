#!/usr/bin/env bash
# Runs one bad-input case through the real stepcast executable.
# A .case file holds three lines:
#   args: <command line after "stepcast">   ({dir} is replaced by the case's folder)
#   exit: <expected exit code>
#   message: <a substring the error must contain>
# A refused command writes nothing: the files of the case's folder must be the same after it, and
# no file may be added there.
set -u
exe=$1 case=$2
dir=$(dirname "$case")
args=$(sed -n 's/^args: //p' "$case")
want_exit=$(sed -n 's/^exit: //p' "$case")
want_msg=$(sed -n 's/^message: //p' "$case")
if [ -z "$args" ] || [ -z "$want_exit" ] || [ -z "$want_msg" ]; then
  echo "malformed case file $case: needs args:, exit: and message: lines" >&2
  exit 1
fi
args=${args//\{dir\}/$dir}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
folder_state() { find "$dir" -maxdepth 1 \( -type f -o -type l \) -printf '%f %s %T@ %l\n' | sort; }
before=$(folder_state)
eval "\"$exe\" $args" >"$out" 2>&1
got_exit=$?
status=0
after=$(folder_state)
if [ "$before" != "$after" ]; then
  echo "the command changed the files of $dir:"
  diff <(echo "$before") <(echo "$after")
  status=1
fi
if [ "$got_exit" != "$want_exit" ]; then
  echo "expected exit $want_exit, got $got_exit"
  status=1
fi
if ! grep -qF -- "$want_msg" "$out"; then
  echo "expected the output to contain: $want_msg"
  status=1
fi
if [ $status -ne 0 ]; then
  echo "command: stepcast $args"
  echo "--- output ---"
  cat "$out"
fi
exit $status
