"""The commands of the ``stepcast`` executable as functions. Each takes the command's options as
keyword arguments (``--global-batch`` is ``global_batch=``), calls the same C++ function the
executable calls, and returns the dict its ``--json`` output holds."""

import json

from . import _options as opt
from . import _stepcast
from ._errors import Infeasible
from ._inputs import Inputs
from ._results import Calibration, Report


def _plan_options(inputs, a):
    """The options every plan command shares, checked and normalized."""
    return {
        "workload": inputs.data_file("workload", a["workload"]),
        "topology": inputs.data_file("topology", a["topology"]),
        "nodes": opt.whole("nodes", a["nodes"], 1),
        "plan": inputs.plan(a["plan"]),
        "global_batch": opt.whole("global_batch", a["global_batch"], 1),
        "seq": opt.whole("seq", a["seq"], 1),
        "precision": opt.text("precision", a["precision"]),
        "optimizer": opt.text("optimizer", a["optimizer"]),
        "overhead": opt.size("overhead", a["overhead"]),
        "calibration": opt.text("calibration", a["calibration"]),
        "gpus": opt.whole("gpus", a["gpus"], 1),
        "gpus_per_domain": opt.whole("gpus_per_domain", a["gpus_per_domain"], 1),
        "set": opt.sets(a["set"]),
        "memory_margin": opt.text("memory_margin", a["memory_margin"]),
    }


def _checked(text, refusal):
    """The command's JSON as a dict; Infeasible (carrying it) when the plan does not fit."""
    result = json.loads(text)
    if refusal is not None:
        raise Infeasible(refusal, result)
    return result


def predict(*, workload, topology, plan=None, gpus=None, gpus_per_domain=None, nodes=None, global_batch=None, seq=None,
            precision=None, optimizer=None, overhead=None, calibration=None, set=None, memory_margin=None,
            interval_runs=None, achieved_fraction=None, explain=False):
    """Step time, tokens/s, MFU and memory per GPU of a plan on a topology (``stepcast predict``).

    Raises Infeasible, with the result and its memory figures, when the plan does not fit."""
    a = dict(locals())
    with Inputs() as inputs:
        options = _plan_options(inputs, a)
        options.update(interval_runs=opt.texts("interval_runs", interval_runs),
                       achieved_fraction=opt.fraction("achieved_fraction", achieved_fraction),
                       explain=opt.flag("explain", explain))
        return _checked(*inputs.call(_stepcast.predict, options))


def memory(*, workload, topology=None, plan=None, gpus=None, gpus_per_domain=None, nodes=None, global_batch=None,
           seq=None, precision=None, optimizer=None, overhead=None, calibration=None, set=None, memory_margin=None,
           explain=False):
    """Memory per GPU of a plan, every term separate (``stepcast memory``). With a topology,
    raises Infeasible when the plan does not fit its GPU."""
    a = dict(locals())
    with Inputs() as inputs:
        options = _plan_options(inputs, a)
        options.update(explain=opt.flag("explain", explain))
        return _checked(*inputs.call(_stepcast.memory, options))


def simulate(*, workload, topology, plan=None, gpus=None, gpus_per_domain=None, nodes=None, global_batch=None, seq=None,
             precision=None, optimizer=None, overhead=None, calibration=None, set=None, memory_margin=None,
             interval_runs=None, seed=1, seeds=1, straggler=None, trace=None):
    """One training step of a plan on the discrete-event engine (``stepcast simulate``). Raises
    Infeasible, with the result, when the plan does not fit."""
    a = dict(locals())
    with Inputs() as inputs:
        options = _plan_options(inputs, a)
        options.update(interval_runs=opt.texts("interval_runs", interval_runs), seed=opt.whole("seed", seed, 0),
                       seeds=opt.whole("seeds", seeds, 1), straggler=opt.text("straggler", straggler),
                       trace=opt.text("trace", trace))
        return _checked(*inputs.call(_stepcast.simulate, options))


def search(*, workload, topology, global_batch, gpus=None, gpus_per_domain=None, nodes=None, seq=None, top=10, refine=5,
           threads=None, max_mbs=16, max_cp=1, precision=None, optimizer=None, flash=False, no_flash=False, doc_len=None,
           peft=None, lora_rank=None, lora_targets=None, calibration=None, set=None, memory_margin=None, compare=None):
    """Every valid plan of a model on a cluster, pruned by memory, ranked by predicted step time, the
    best ``refine`` re-timed on the event engine (``stepcast search --json``). The result's
    ``to_dataframe()`` gives the ranked plans; ``to_dataframe("rejections")`` the rejection counts;
    with ``compare`` (a plan, or a list of plans, as ``--compare``) ``table("compare")`` the first one's
    step-time terms beside the best's, ``table("compare-2")`` the second's, and so on."""
    with Inputs() as inputs:
        options = {
            "workload": inputs.data_file("workload", workload),
            "topology": inputs.data_file("topology", topology),
            "global_batch": opt.whole("global_batch", global_batch, 1),
            "gpus": opt.whole("gpus", gpus, 1),
            "gpus_per_domain": opt.whole("gpus_per_domain", gpus_per_domain, 1),
            "nodes": opt.whole("nodes", nodes, 1),
            "seq": opt.whole("seq", seq, 1),
            "top": opt.whole("top", top, 1),
            "refine": opt.whole("refine", refine, 0),
            "threads": opt.whole("threads", threads, 1),
            "max_mbs": opt.whole("max_mbs", max_mbs, 1),
            "max_cp": opt.whole("max_cp", max_cp, 1),
            "precision": opt.text("precision", precision),
            "optimizer": opt.text("optimizer", optimizer),
            "flash": opt.flag("flash", flash),
            "no_flash": opt.flag("no_flash", no_flash),
            "doc_len": opt.whole("doc_len", doc_len, 1),
            "peft": opt.text("peft", peft),
            "lora_rank": opt.whole("lora_rank", lora_rank, 1),
            "lora_targets": opt.text("lora_targets", lora_targets),
            "calibration": opt.text("calibration", calibration),
            "set": opt.sets(set),
            "memory_margin": opt.text("memory_margin", memory_margin),
            "compare": opt.texts("compare", compare),
        }
        return Report(json.loads(inputs.call(_stepcast.search, options)))


def table(*, workloads, topologies, gpus, global_batch, gpus_per_domain=None, seq=None, tokens=None, price=None,
          set=None, memory_margin=None, plan=None, threads=None, refine=0, max_mbs=16, max_cp=1, precision=None,
          optimizer=None, flash=False, no_flash=False, doc_len=None, peft=None, lora_rank=None, lora_targets=None,
          calibration=None):
    """Capacity table over workloads x clusters x GPU counts (``stepcast table --format json``):
    each cell's best plan (or the ``plan`` family's), step time, tokens/s, MFU, memory, and with
    ``tokens`` the days, GPU-hours and cost. ``to_dataframe()`` gives one row per cell."""
    with Inputs() as inputs:
        if isinstance(plan, dict):
            plan = opt.compact_plan(plan)
        prices = None if price is None else [opt.positive("price", p) for p in opt.listed(price)]
        options = {
            "workloads": [inputs.data_file("workload", w) for w in opt.listed(workloads)],
            "topologies": [inputs.data_file("topology", t) for t in opt.listed(topologies)],
            "gpus": [opt.whole("gpus", g, 1) for g in opt.listed(gpus)],
            "gpus_per_domain": opt.whole("gpus_per_domain", gpus_per_domain, 1),
            "global_batch": opt.whole("global_batch", global_batch, 1),
            "seq": opt.whole("seq", seq, 1),
            "tokens": opt.positive("tokens", tokens),
            "price": prices,
            "set": opt.sets(set),
            "memory_margin": opt.text("memory_margin", memory_margin),
            "plan": opt.text("plan", plan),
            "threads": opt.whole("threads", threads, 1),
            "refine": opt.whole("refine", refine, 0),
            "max_mbs": opt.whole("max_mbs", max_mbs, 1),
            "max_cp": opt.whole("max_cp", max_cp, 1),
            "precision": opt.text("precision", precision),
            "optimizer": opt.text("optimizer", optimizer),
            "flash": opt.flag("flash", flash),
            "no_flash": opt.flag("no_flash", no_flash),
            "doc_len": opt.whole("doc_len", doc_len, 1),
            "peft": opt.text("peft", peft),
            "lora_rank": opt.whole("lora_rank", lora_rank, 1),
            "lora_targets": opt.text("lora_targets", lora_targets),
            "calibration": opt.text("calibration", calibration),
        }
        return Report(json.loads(inputs.call(_stepcast.table, options)))


def collective(*, op, topology, size=None, sizes=None, algorithm=None, protocol=None, ranks=None, nodes=None,
               gpus=None, gpus_per_domain=None, set=None, explain=False, calibration=None, engine="analytical"):
    """Predicted time of one collective, or a sweep of ``sizes`` ("1MiB:16GiB"), in nccl-tests'
    terms (``stepcast collective --json``). ``size`` takes a unit ("256 MiB"); a whole number is bytes."""
    with Inputs() as inputs:
        options = {
            "op": opt.text("op", op),
            "topology": inputs.data_file("topology", topology),
            "size": opt.size("size", size),
            "sizes": opt.text("sizes", sizes),
            "algorithm": opt.text("algorithm", algorithm),
            "protocol": opt.text("protocol", protocol),
            "ranks": opt.whole("ranks", ranks),
            "nodes": opt.whole("nodes", nodes),
            "gpus": opt.whole("gpus", gpus, 1),
            "gpus_per_domain": opt.whole("gpus_per_domain", gpus_per_domain, 1),
            "set": opt.sets(set),
            "explain": opt.flag("explain", explain),
            "calibration": opt.text("calibration", calibration),
            "engine": opt.text("engine", engine),
        }
        return json.loads(inputs.call(_stepcast.collective, options))


def _measured_options(inputs, a):
    """The options calibrate and validate share on measured collectives and kernels."""
    return {
        "measured": opt.texts("measured", a["measured"]),
        "topology": inputs.data_file("topology", a["topology"]),
        "nodes": opt.whole("nodes", a["nodes"], 1),
        "op": opt.text("op", a["op"]),
        "ranks": opt.whole("ranks", a["ranks"], 1),
        "gpus_per_node": opt.whole("gpus_per_node", a["gpus_per_node"], 1),
        "verbose": opt.flag("verbose", a["verbose"]),
        "algorithm": opt.text("algorithm", a["algorithm"]),
        "min_size": opt.size("min_size", a["min_size"]),
        "max_size": opt.size("max_size", a["max_size"]),
        "holdout": opt.text("holdout", a["holdout"]),
    }


def _runs_exclusive(a, mode_options):
    """runs= replaces the measured-file options, as --runs excludes them on the command line."""
    given = [k for k in mode_options if a[k] is not None and a[k] is not False]
    if a["runs"] is not None and given:
        raise opt.refused("runs", f"excludes {', '.join(opt.option(k) for k in given)}: give one or the other")


_MEASURED_ONLY = ("measured", "topology", "nodes", "algorithm", "min_size", "max_size", "holdout")


def validate(*, measured=None, topology=None, runs=None, engine=None, nodes=None, op=None, ranks=None,
             gpus_per_node=None, verbose=False, algorithm=None, min_size=None, max_size=None, holdout=None,
             calibration=None, plot=None):
    """Predicted against measured (``stepcast validate --json``): collectives and kernels from
    ``measured`` files on ``topology``, or training runs from ``runs`` files (``engine`` "analytical"
    or "des"). ``plot`` also writes the SVG plot there."""
    a = dict(locals())
    _runs_exclusive(a, _MEASURED_ONLY)
    if engine is not None and runs is None:
        raise opt.refused("engine", "needs runs= (it names the engine that predicts training runs)")
    with Inputs() as inputs:
        options = _measured_options(inputs, a)
        options.update(runs=opt.texts("runs", runs), engine=opt.one_of("engine", engine, ("analytical", "des")),
                       calibration=opt.text("calibration", calibration), plot=opt.text("plot", plot))
        return json.loads(inputs.call(_stepcast.validate, options))


def calibrate(*, measured=None, topology=None, runs=None, fit=None, fit_on=None, base=None, output=None, nodes=None,
              op=None, ranks=None, gpus_per_node=None, verbose=False, algorithm=None, min_size=None, max_size=None,
              holdout=None):
    """Fits the model to measurements (``stepcast calibrate``): tiers, NCCL's tuning model and
    kernel efficiencies from ``measured`` files on ``topology``, or the compute model's parameters
    ``fit`` from training ``runs``. Returns the calibration as a dict (with the fit's text in
    ``.report``); ``output`` also writes it to that file, as ``-o`` does."""
    a = dict(locals())
    _runs_exclusive(a, _MEASURED_ONLY)
    for name in ("fit", "fit_on", "base"):
        if a[name] is not None and runs is None:
            raise opt.refused(name, "needs runs= (it applies to fits on training runs)")
    with Inputs() as inputs:
        options = _measured_options(inputs, a)
        options.update(runs=opt.texts("runs", runs), fit=opt.texts("fit", fit), fit_on=opt.text("fit_on", fit_on),
                       base=opt.text("base", base))
        calibration, report = inputs.call(_stepcast.calibrate, options)
    if output is not None:
        with open(opt.text("output", output), "w", encoding="utf-8") as f:
            f.write(calibration)
    return Calibration(json.loads(calibration), report)


def operators(*, workload, topology, plan=None, gpus=None, gpus_per_domain=None, nodes=None, global_batch=None,
              seq=None, precision=None, optimizer=None, set=None):
    """The operators the compute model prices for one micro-batch of a plan, with exact shapes
    (``stepcast operators --format json``); ``to_dataframe()`` gives one row per operator."""
    a = dict(locals(), overhead=None, calibration=None, memory_margin=None)
    with Inputs() as inputs:
        options = _plan_options(inputs, a)
        return Report(json.loads(inputs.call(_stepcast.operators, options)))
