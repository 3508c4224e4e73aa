"""stepcast from Python: step time and per-GPU memory of distributed training plans.

Each function is a command of the ``stepcast`` executable, run by the same C++ libraries, with the
command's options as keyword arguments (``--global-batch 64`` is ``global_batch=64``, ``--set K=V``
is ``set={"K": V}``); each returns the dict the command's ``--json`` output holds::

    import stepcast
    r = stepcast.predict(workload="llama2-7b", topology="dgx-a100", gpus=8, plan="fsdp=8",
                         global_batch=64, seq=4096)
    r["step_time_s"]

Workloads and topologies are paths, shipped names ("llama3-70b", "dgx-h100") or dicts of the
same JSON. Bad input raises InputError (file, pointer, message); a plan that does not fit raises
Infeasible (with the result and its memory figures). The GIL is released while a command runs.
"""

from ._commands import calibrate, collective, memory, operators, predict, search, simulate, table, validate
from ._errors import Error, InputError, Infeasible
from ._inputs import shipped_names
from ._results import Calibration, Report
from ._stepcast import version as __version__

__all__ = [
    "predict", "memory", "simulate", "search", "table", "collective", "validate", "calibrate", "operators",
    "Error", "InputError", "Infeasible", "Report", "Calibration", "shipped_names",
]
