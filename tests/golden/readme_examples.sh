#!/usr/bin/env bash
# Every `build/stepcast ...` command in the README's code blocks runs as the README says: exit 0,
# or the code given by a trailing "# exit N" comment. Commands run in a scratch folder that sees
# the repository's workloads/, topologies/ and tests/ (files they write, like --trace, land there).
# Usage: readme_examples.sh STEPCAST SOURCE_DIR
set -u
exe=$1
src=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for d in workloads topologies tests reports; do ln -s "$src/$d" "$scratch/$d"; done
mkdir "$scratch/build"
ln -s "$exe" "$scratch/build/stepcast"

# Code-block lines only, continuation lines joined.
commands=$(awk '/^```/ { inblock = !inblock; next }
                inblock && /\\$/ { sub(/\\$/, ""); pending = pending $0; next }
                inblock { print pending $0; pending = "" }' "$src/README.md" | grep -E '^build/stepcast ')
[ -n "$commands" ] || { echo "FAIL: no build/stepcast command found in the README's code blocks"; exit 1; }

status=0
count=0
while IFS= read -r line; do
  expected=0
  if [[ $line =~ \#[[:space:]]*exit[[:space:]]+([0-9]+) ]]; then expected=${BASH_REMATCH[1]}; fi
  command=${line%%#*}
  out=$(cd "$scratch" && eval "$command" 2>&1)
  rc=$?
  count=$((count + 1))
  if [ $rc -ne "$expected" ]; then
    echo "FAIL (exit $rc, the README says $expected): $command"; echo "$out" | tail -n 15; status=1
  else
    echo "ok (exit $rc): $command"
  fi
done <<<"$commands"
echo "$count README commands run"
exit $status
