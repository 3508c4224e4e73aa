"""scripts/accuracy-report's pairs of runs one source measured with the same model, plan and GPU
count on two GPU generations, on runs built by hand: measured and predicted speed-up and their
ratio."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "support"))
from script_module import load_script  # noqa: E402

accuracy_report = load_script("accuracy-report")


def run(topology, generation, tokens_per_s, held, plan="fsdp=8", workload="mpt-1b"):
    return {"source": "s", "generation": generation, "held": held,
            "run": {"workload": workload, "gpus": 8, "plan": plan, "topology": topology,
                    "metrics": [{"metric": "tokens_per_s", "measured": tokens_per_s}]}}


# One plan on an A100 node at 100 tokens/s, predicted exactly (held 0%), and on an H100 node at 250
# (x2.50), predicted 10% fast (275: x2.75): predicted over measured speed-up 2.75 / 2.50 - 1 = +10%.
# A second plan measured at 200 and 400 (x2.00), predicted 5% slow and 5% fast (190, 420: x2.2105),
# +10.53%. Medians: measured x2.25, predicted x2.48, ratio +10.3%. A plan measured on one
# generation only, and a pair on one generation, make no pair.
runs = [run("a100", "Ampere", 100, 0.0), run("h100", "Hopper", 250, 10.0),
        run("a100", "Ampere", 200, -5.0, plan="fsdp=16"), run("h100", "Hopper", 400, 5.0, plan="fsdp=16"),
        run("a100", "Ampere", 50, 0.0, plan="zero=1"),
        run("a100", "Ampere", 70, 0.0, plan="tp=2"), run("a100-40", "Ampere", 60, 0.0, plan="tp=2")]
doc = accuracy_report.Doc()
accuracy_report.generation_pairs_section(doc, runs)
want = "| s | a100 -> h100 | 2 | x2.25 | x2.48 | +10.3% |"
if want not in doc.md:
    print("\n".join(doc.md))
    print(f"expected the row: {want}")
    sys.exit(1)
if sum(1 for line in doc.md if line.startswith("| s |")) != 1:
    print("a same-generation pair was counted")
    sys.exit(1)
print("generation pairs: ok")
