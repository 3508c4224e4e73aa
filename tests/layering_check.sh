#!/usr/bin/env bash
# Fails on any #include "stepcast/<layer>/..." that points upward (STYLE.md B2).
set -u
root=$1
rank() {
  case $1 in
    core) echo 0 ;; topology|workload) echo 1 ;; plan) echo 2 ;; cost|des) echo 3 ;; graph) echo 4 ;;
    sim|calibrate) echo 5 ;; planner) echo 6 ;; report) echo 7 ;; cli) echo 8 ;; *) echo -1 ;;
  esac
}
status=0
for file in $(cd "$root" && find include/stepcast src -name '*.hpp' -o -name '*.cpp' | sort); do
  layer=$(echo "$file" | sed -E 's#^(include/stepcast|src)/([^/]+)/.*#\2#')
  own=$(rank "$layer")
  [ "$own" -lt 0 ] && continue
  while IFS= read -r inc; do
    dep=$(echo "$inc" | sed -E 's#.*"stepcast/([^/]+)/.*#\1#')
    [ "$dep" = "$layer" ] && continue
    if [ "$(rank "$dep")" -ge "$own" ]; then
      echo "$file includes stepcast/$dep/ (layer $dep is not below $layer)"
      status=1
    fi
  done < <(grep -h '#include "stepcast/' "$root/$file")
done
[ $status -eq 0 ] && echo "layering ok"
exit $status
