"""The notebook in examples/ is committed without outputs (CI executes it; outputs would only go
stale): every code cell has none and no execution count."""

import json

from conftest import ROOT


def test_the_example_notebook_is_committed_without_outputs():
    notebook = json.loads((ROOT / "examples/llama3-70b-h100.ipynb").read_text())
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert code
    for cell in code:
        assert cell["outputs"] == [] and cell["execution_count"] is None
