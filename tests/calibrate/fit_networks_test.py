"""scripts/fit-networks' solver on rows built by hand, each expected figure derived in the comment
above it. A row is (NCCL's latency, NCCL's bandwidth time, measured time, point-to-point?); the
unknowns are a (the latency factor), b = 1 / bandwidth efficiency, c = 1 / point-to-point efficiency,
and a row's error is (a L + b B (or c B)) / t - 1."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from script_module import load_script  # noqa: E402

fit_networks = load_script("fit-networks")

failures = []


def check(what, got, want, tolerance=1e-6):
    if not math.isclose(got, want, rel_tol=tolerance, abs_tol=tolerance):
        failures.append(f"{what}: {got!r}, expected {want!r}")


# Exact terms are recovered: t = 2 L + 1.25 B for collectives and 2 L + 2.5 B for point-to-point,
# at latencies and sizes that vary independently, so every error is 0 at a = 2, efficiencies 0.8
# and 0.4, and nowhere else.
exact = [(1e-5, 1e-6, 2 * 1e-5 + 1.25 * 1e-6, False), (1e-5, 1e-3, 2 * 1e-5 + 1.25 * 1e-3, False),
         (3e-5, 4e-4, 2 * 3e-5 + 1.25 * 4e-4, False), (1e-5, 1e-3, 2 * 1e-5 + 2.5 * 1e-3, True),
         (2e-5, 2e-5, 2 * 2e-5 + 2.5 * 2e-5, True)]
terms, used = fit_networks.solve([exact])
check("exact latency factor", terms["latency_factor"], 2.0)
check("exact bandwidth efficiency", terms["bandwidth_efficiency"], 0.8)
check("exact point-to-point efficiency", terms["p2p_bandwidth_efficiency"], 0.4)

# One outlier among five: four sizes at efficiency 0.8 (t = 1.25 B) and one at 0.2 (t = 5 B), no
# latency. The absolute error 4 |0.8 b - 1| + |0.2 b - 1| falls to b = 1.25 (slope -3.4 left of it,
# +3.0 right) and stays at the four: efficiency 0.8. Squares would give 4 x 2 x 0.8 (0.8 b - 1) +
# 2 x 0.2 (0.2 b - 1) = 0, b = 6.8 / 5.2, efficiency 0.765: the outlier pulling the others.
outlier = [(0.0, 1.0, 1.25, False)] * 4 + [(0.0, 1.0, 5.0, False)]
terms, used = fit_networks.solve([outlier])
check("bandwidth efficiency beside an outlier", terms["bandwidth_efficiency"], 0.8)
# No row depends on the latency or on point-to-point: both stay at NCCL's 1, and say so.
check("unused latency factor", terms["latency_factor"], 1.0)
check("unused point-to-point efficiency", terms["p2p_bandwidth_efficiency"], 1.0)
if used != [False, True, False]:
    failures.append(f"terms used: {used}, expected [False, True, False]")

# Each log weighed alike, not each row: log A's one row at efficiency 0.8 (t = 1.25 B) against log
# B's three at 0.4 (t = 2.5 B). Alike, |0.8 b - 1| + 3 x 1/3 |0.4 b - 1| rises right of b = 1.25
# (slope 0.8 - 0.4): efficiency 0.8. Row by row, 3 |0.4 b - 1| would win (slope 0.8 - 1.2) at 0.4.
terms, _ = fit_networks.solve([[(0.0, 1.0, 1.25, False)], [(0.0, 1.0, 2.5, False)] * 3])
check("logs weighed alike", terms["bandwidth_efficiency"], 0.8)

# Bounds hold: rows measured faster than NCCL's line rate (t = 0.5 B) want efficiency 2; the fit
# stops at its bound of 1.
terms, _ = fit_networks.solve([[(0.0, 1.0, 0.5, False)] * 3])
check("bandwidth efficiency at its bound", terms["bandwidth_efficiency"], fit_networks.UPPER["bandwidth_efficiency"])

for failure in failures:
    print("FAIL", failure)
sys.exit(1 if failures else 0)
