"""search and table results as DataFrames: one column per key of the report's table, in its order,
one row per row; pandas is imported only when a DataFrame is asked for."""

import os
import subprocess
import sys

import pytest

import stepcast
from conftest import BUILD


def test_search_plans_as_a_dataframe_hold_the_json_rows_ranked_by_step_time():
    pandas = pytest.importorskip("pandas")
    result = stepcast.search(workload="llama2-7b", topology="p4d-24xlarge", nodes=2, global_batch=32, refine=0)
    frame = result.to_dataframe()
    plans = result.table("plans")
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.columns) == [c["key"] for c in plans["columns"]]
    assert frame.to_dict("records") == plans["rows"]
    # Ranked fastest first (refine=0: by the analytical step time), ranks counting from 1.
    assert list(frame["rank"]) == list(range(1, len(frame) + 1))
    assert frame["step_time_s"].is_monotonic_increasing
    rejections = result.to_dataframe("rejections")
    assert set(rejections.columns) == {"code", "reason", "count", "example"}


def test_table_cells_as_a_dataframe_have_one_row_per_gpu_count():
    pytest.importorskip("pandas")
    result = stepcast.table(workloads="llama2-7b", topologies="dgx-a100", gpus=[8, 16, 32], global_batch=64)
    frame = result.to_dataframe()
    assert list(frame["gpus"]) == [8, 16, 32]
    assert frame.to_dict("records") == result.table("capacity")["rows"]


def test_pandas_is_imported_only_when_a_dataframe_is_asked_for():
    script = ("import sys, stepcast\n"
              "r = stepcast.search(workload='llama2-7b', topology='p4d-24xlarge', nodes=1, global_batch=8, refine=0)\n"
              "assert 'pandas' not in sys.modules\n"
              "r.to_dataframe()\n"
              "assert 'pandas' in sys.modules\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(BUILD / "python"), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_a_missing_table_name_lists_the_tables():
    result = stepcast.search(workload="llama2-7b", topology="p4d-24xlarge", nodes=1, global_batch=8, refine=0)
    with pytest.raises(KeyError, match="tables: plans, rejections"):
        result.table("nope")
