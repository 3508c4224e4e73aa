"""scripts/accuracy-report's check of the 90% interval on a source it never saw, on runs built by
hand: each run's class, source and throughput error left out of the fit ("held", percent), and a
residual r = log(measured / predicted throughput) = -log(1 + held / 100)."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from script_module import load_script  # noqa: E402

accuracy_report = load_script("accuracy-report")

failures = []


def close(what, got, want, tol=1e-6):
    if not math.isclose(got, want, abs_tol=tol):
        failures.append(f"{what}: {got}, expected {want}")


def run(source, run_class, residual):
    return {"source": source, "run": {"run_class": run_class}, "held": 100.0 * (math.exp(-residual) - 1.0)}


# Ten residuals 0.00, 0.01, ..., 0.09: the 5% and 95% quantiles interpolate between order
# statistics at positions 0.45 and 8.55: 0.0045 and 0.0855.
sample = [0.01 * i for i in range(10)]
close("quantile 0.05", accuracy_report.quantile(sample, 0.05), 0.0045)
close("quantile 0.95", accuracy_report.quantile(sample, 0.95), 0.0855)

# Student's t, 95% point, in closed form: on 1 degree of freedom tan(0.45 pi) = 6.313752, on 2
# 0.9 x sqrt(2 / (1 - 0.9^2)) = 2.919986; tables (NIST/SEMATECH e-Handbook 1.3.6.7.2) print 2.132 on 4.
close("t on 1", accuracy_report.student_t_quantile(0.95, 1), 6.313752, tol=1e-6)
close("t on 2", accuracy_report.student_t_quantile(0.95, 2), 2.919986, tol=1e-6)
close("t on 4", accuracy_report.student_t_quantile(0.95, 4), 2.132, tol=5e-4)

# Class X: source a's ten runs 0.00 .. 0.09 (median 0.045), c's ten 0.10 .. 0.19 (median 0.145),
# b's two, 0.05 and 0.75; b also ran one run of class Y, which no other source ran.
runs = [run("a", "X", r) for r in sample] + [run("c", "X", 0.1 + r) for r in sample] + \
    [run("b", "X", 0.05), run("b", "X", 0.75), run("b", "Y", 0.0)]

# b left out: a and c share X, medians 0.045 and 0.145: sample variance 0.1^2 / 2 = 0.005, tau =
# 0.0707107 on 1 degree of freedom; centre 0.095. The twenty deviations from each run's own
# source median are -0.045, -0.045, -0.035, ..., 0.045, 0.045: both quantiles (positions 0.95 and
# 18.05) are -/+0.045. A new source's offset: 6.313752 x 0.0707107 x sqrt(1 + 1/2) = 0.546787;
# each side hypot(0.045, 0.546787) = 0.548636: r from -0.453636 to 0.643636, so b's 0.05 is
# inside and 0.75 is not; its Y run has no interval. Width exp(1.097271) - 1 = 1.995980.
others = {"X": {"a": sample, "c": [0.1 + r for r in sample]}}
close("tau without b", accuracy_report.between_source_spread(others)[0], 0.0707107)
low, high = accuracy_report.class_interval(others["X"], accuracy_report.between_source_spread(others))
close("low without b", low, -0.453636)
close("high without b", high, 0.643636)

# c left out: a and b share X, medians 0.045 and 0.40: variance 0.355^2 / 2, tau = 0.251023;
# centre 0.2225. Deviations -0.35, -0.045, -0.035, ..., 0.045, 0.35 (twelve): the 5% quantile at
# position 0.55 is -0.35 + 0.305 x 0.55 = -0.18225, the 95% at 10.45 is 0.18225; offset 6.313752 x
# 0.251023 x sqrt(1.5) = 1.941094, each side hypot(0.18225, 1.941094) = 1.949631: r from
# -1.727131 to 2.172131, which holds all ten of c's runs (0.10 .. 0.19).
got = accuracy_report.unseen_coverage(runs, ["b", "c"])
want = [("b", 3, 1, 1), ("c", 10, 10, 0)]
if [line[:4] for line in got] != want:
    failures.append(f"coverage {[line[:4] for line in got]}, expected {want}")
else:
    close("width for b", got[0][4][0], 1.995980, tol=1e-5)
    close("width for c", got[1][4][0], math.exp(2 * 1.949631) - 1.0, tol=1e-4)
# No class shared: a's dense 3D runs on Ampere (median 0.045) and c's on Hopper (0.145) share the
# family, tau = 0.0707107 as above on 1 degree of freedom; one source alone has no spread.
close("tau by family", accuracy_report.between_source_spread(
    {"Ampere, dense 3D": {"a": sample}, "Hopper, dense 3D": {"c": [0.1 + r for r in sample]}})[0], 0.0707107)
if accuracy_report.between_source_spread({"X": {"a": sample}}) != (0.0, 0):
    failures.append("one source: a spread")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("unseen-source interval check: ok")
