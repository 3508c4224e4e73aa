"""`cmake --install <build> --component python` (what python/install runs) installs a package that
imports from any folder and answers the README's first call as the executable does."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, cli_json

CALL = ("import stepcast; print(repr(stepcast.predict(workload='llama2-7b', topology='dgx-a100', gpus=8, "
        "plan='fsdp=8', global_batch=64, seq=4096)['step_time_s']))")


def test_the_installed_package_imports_from_another_folder_and_matches_the_executable(tmp_path):
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not on PATH")
    root = tmp_path / "root"
    subprocess.run([cmake, "--install", str(BUILD), "--component", "python"], env=dict(os.environ, DESTDIR=str(root)),
                   check=True, capture_output=True)
    found = sorted(root.rglob("stepcast/__init__.py"))
    assert len(found) == 1
    site = found[0].parent.parent
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    done = subprocess.run([sys.executable, "-c", CALL], cwd=tmp_path, env=env, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    expected = cli_json("predict", "--workload", "workloads/llama2-7b.json", "--topology", "topologies/dgx-a100.json",
                        "--gpus", "8", "--plan", "fsdp=8", "--global-batch", "64", "--seq", "4096", "--json")
    assert done.stdout == repr(expected["step_time_s"]) + "\n"
    assert json.loads(done.stdout) == expected["step_time_s"]
