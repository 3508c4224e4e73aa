"""scripts/fit-defaults' measured host_overhead, on rows built by hand: each host-bound layer's issue
time per layer over the launches the model counts for it, the median over the host-bound rows."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from script_module import load_script  # noqa: E402

fit_defaults = load_script("fit-defaults")


def row(issue_s, layers, recompute, host_bound):
    return {"issue_s": issue_s, "layers": layers, "recompute": recompute, "host_bound": host_bound}


# 8 ms over 4 layers with 40 launches a layer: 50 us; 12 ms over 4 layers with 50 launches (full
# recompute): 60 us; 3 ms over 1 layer with 40 launches: 75 us; the GPU-bound row (1 s) is not
# host time and stays out. Median of 50, 60, 75 us: 60 us.
rows = [row(8e-3, 4, "none", True), row(12e-3, 4, "full", True), row(3e-3, 1, "none", True),
        row(1.0, 4, "none", False)]
got = fit_defaults.host_per_launch(rows, lambda r: 50.0 if r["recompute"] == "full" else 40.0)
if not math.isclose(got, 60e-6, rel_tol=1e-12):
    print(f"host per launch: {got}, expected 60e-6")
    sys.exit(1)
