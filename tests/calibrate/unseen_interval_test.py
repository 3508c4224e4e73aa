"""scripts/accuracy-report's check of the 90% interval on a source it never saw, on runs built by
hand: each run's class, source and throughput error left out of the fit ("held", percent), and a
residual r = log(measured / predicted throughput) = -log(1 + held / 100)."""
import importlib.machinery
import importlib.util
import math
import os
import sys

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts")
_loader = importlib.machinery.SourceFileLoader("accuracy_report", os.path.join(SCRIPTS, "accuracy-report"))
_spec = importlib.util.spec_from_loader("accuracy_report", _loader)
accuracy_report = importlib.util.module_from_spec(_spec)
_loader.exec_module(accuracy_report)

failures = []


def run(source, run_class, residual):
    return {"source": source, "run": {"run_class": run_class}, "held": 100.0 * (math.exp(-residual) - 1.0)}


# Source a: ten runs of class X with residuals 0.00, 0.01, ..., 0.09. Their 5% and 95% quantiles
# interpolate between order statistics at positions 0.45 and 8.55: 0.0045 and 0.0855.
sample = sorted(0.01 * i for i in range(10))
for q, want in ((0.05, 0.0045), (0.95, 0.0855)):
    got = accuracy_report.quantile(sample, q)
    if not math.isclose(got, want, abs_tol=1e-12):
        failures.append(f"quantile {q}: {got}, expected {want}")
# Source b: two runs of X, residual 0.05 (inside a's interval) and 0.2 (outside), and one of class
# Y, which no other source ran (no interval). Source a is checked against b's two X runs: fewer
# than ten, so none of its runs has an interval.
runs = [run("a", "X", r) for r in sample] + [run("b", "X", 0.05), run("b", "X", 0.2), run("b", "Y", 0.0)]
got = accuracy_report.unseen_coverage(runs, ["a", "b"])
want = [("a", 10, 0, 10), ("b", 3, 1, 1)]
if got != want:
    failures.append(f"coverage {got}, expected {want}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("unseen-source interval check: ok")
