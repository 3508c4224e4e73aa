"""scripts/fit-defaults takes host_overhead from `stepcast calibrate --measured` on eager-host files:
the value, its source and each host-bound layer's row as calibrate prints them, on
tests/data/eager-host/hand-made.json (argv[1]: the stepcast binary)."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from script_module import load_script  # noqa: E402

fit_defaults = load_script("fit-defaults")
HAND_MADE = "tests/data/eager-host/hand-made.json"

# 5.76 ms over 4 layers of 36 launches (a GPT layer's, tests/calibrate/eager_host_test.cpp) = 40 us;
# 9.8 ms over 4 layers of 49 (full recompute) = 50 us; the third shape is GPU-bound. Median 45 us.
value, source, rows = fit_defaults.host_calibration(sys.argv[1], [HAND_MADE])
failures = []
if not math.isclose(value, 45e-6, rel_tol=1e-8):
    failures.append(f"host_overhead {value}, expected 45e-6")
if HAND_MADE not in source or "the median over 2 host-bound GPT layers" not in source:
    failures.append(f"source: {source}")
want = [(HAND_MADE, 1024, "none", 36.0, 40e-6), (HAND_MADE, 1024, "full", 49.0, 50e-6)]
got = [(r["file"], r["hidden"], r["recompute"], r["launches"], round(r["per_launch_s"], 12)) for r in rows]
if got != want:
    failures.append(f"rows {got}, expected {want}")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("fit-defaults' measured host_overhead: ok")
