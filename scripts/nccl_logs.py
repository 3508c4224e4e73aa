"""The public nccl-tests logs of the development corpus and the shipped topology each ran on,
shared by scripts/validate-logs and scripts/fit-networks."""
import glob
import json
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The corpus's logs as committed (copies of ../shared/data/nccl-tests, with their sources).
DATA = os.path.join(ROOT, "tests", "data", "nccl-tests")
# Which shipped topology each family of logs ran on, and the target median |error| (percent) of issue 13.
MACHINES = [("_H100_", "topologies/dgx-h100.json", 10.0), ("_polaris_", "topologies/alcf-polaris.json", 15.0)]


def corpus_logs(data=DATA):
    """Every log of the folder, but the truncated copy the log reader's tests use (*_cut.txt)."""
    return [p for p in sorted(glob.glob(os.path.join(data, "nccl-tests_*.txt"))) if not p.endswith("_cut.txt")]


def nodes_of(name):
    m = re.search(r"_(\d+)nodes?_", name)
    return int(m.group(1)) if m else 1


def short(name):
    return os.path.basename(name).replace("nccl-tests_", "").replace(".txt", "")


def machine_of(name):
    return next((m for m in MACHINES if m[0] in os.path.basename(name)), None)


def log_args(path, topology=None):
    return ["--measured", path, "--topology", topology or machine_of(path)[1], "--nodes", str(nodes_of(path))]


def validate(binary, path, *extra, topology=None, every_size=False):
    """`stepcast validate --algorithm auto --min-size 1MiB --json` of one log (every size with
    `every_size`), parsed."""
    sizes = [] if every_size else ["--min-size", "1MiB"]
    cmd = [binary, "validate", *log_args(path, topology), "--algorithm", "auto", *sizes, "--json", *extra]
    return json.loads(subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout)
