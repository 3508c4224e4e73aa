"""What the module's tests share: the repository, the stepcast executable they compare with (its
--json output is the oracle: the module must return exactly what the command prints), and the
module itself, imported from the build folder when PYTHONPATH does not already hold it."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("STEPCAST_BUILD_DIR", ROOT / "build"))
BINARY = pathlib.Path(os.environ.get("STEPCAST_BINARY", BUILD / "stepcast"))

try:
    import stepcast  # noqa: F401
except ImportError:
    sys.path.insert(0, str(BUILD / "python"))


def run_cli(*args):
    """The executable with `args`, run from the repository root; its CompletedProcess."""
    return subprocess.run([str(BINARY), *args], cwd=ROOT, capture_output=True, text=True, check=False)


def cli_json(*args):
    """The executable's --json output (exit 0 required) as a dict."""
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(autouse=True)
def _from_repository_root(monkeypatch):
    # Relative paths in the tests (tests/data/...) read as the executable reads them.
    monkeypatch.chdir(ROOT)


def pytest_configure(config):
    if not BINARY.exists():
        raise pytest.UsageError(f"the stepcast executable is not at {BINARY}: build it, or set STEPCAST_BINARY")
