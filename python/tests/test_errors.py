"""Bad input raises InputError and a plan that does not fit raises Infeasible, with the message the
executable prints for the same options before it exits 2 or 3. Most cases are the executable's own
bad-input catalogue (tests/bad-inputs/*.case: its arguments, exit code and the rule's words); the
module must raise for the same case the class of that exit code, with the same text."""

import json
import pathlib
import shlex

import pytest

import stepcast
from conftest import ROOT, cli_json, run_cli

BAD = "tests/bad-inputs"


class Case:
    """A call of the module and the command line it stands for: a catalogue file, or args given here."""

    def __init__(self, name, call, args=None, exit_code=None, message=None):
        self.name, self.call = name, call
        if args is None:
            text = (ROOT / BAD / f"{name}.case").read_text()
            field = dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)
            args = field["args"].replace("{dir}", str(pathlib.Path(BAD, name).parent))
            exit_code, message = int(field["exit"]), field["message"]
        self.args, self.exit_code, self.message = shlex.split(args), exit_code, message

    def __repr__(self):
        return self.name


CASES = [
    Case("workload/unknown_key",
         lambda: stepcast.memory(workload=f"{BAD}/workload/unknown_key.json", plan="dp=1")),
    Case("workload/heads_not_dividing",
         lambda: stepcast.memory(workload=f"{BAD}/workload/heads_not_dividing.json", plan="dp=1")),
    Case("plan/heads_tp", lambda: stepcast.memory(workload="llama2-13b", plan="tp=3")),
    Case("predict/bad_overhead", lambda: stepcast.memory(workload="llama2-7b", plan="fsdp=8", overhead="2")),
    Case("predict/unknown_optimizer", lambda: stepcast.memory(workload="llama2-7b", plan="fsdp=8", optimizer="lamb")),
    Case("fp8-blackwell/unknown_precision",
         lambda: stepcast.predict(workload="llama2-7b", topology="dgx-b200", plan="dp=32,precision=fp4")),
    Case("newcomer/memory-margin-needs-topology",
         lambda: stepcast.memory(workload="seed-7b", plan="fsdp=8", memory_margin="5%")),
    Case("set-unknown-path",
         lambda: stepcast.memory(workload="llama2-7b", topology="p4d-24xlarge", plan="fsdp=8",
                                 set={"nics.bandwith": "200 Gbps"}),
         args="memory --workload workloads/llama2-7b.json --topology topologies/p4d-24xlarge.json --plan fsdp=8 "
              "--set 'nics.bandwith=200 Gbps'",
         exit_code=2, message='has no field "nics.bandwith"; did you mean "nics.bandwidth"?'),
    Case("collective/unknown-op",
         lambda: stepcast.collective(op="allreduce-ish", size="1 GiB", topology="flat-400gbps")),
    Case("collective/bad-size-unit",
         lambda: stepcast.collective(op="all-reduce", size="14e9 Gb", topology="flat-400gbps")),
    Case("nccl/only_row_cut",
         lambda: stepcast.validate(measured=f"{BAD}/nccl/only_row_cut.txt", topology="alcf-polaris")),
    Case("calibration/unknown_key",
         lambda: stepcast.validate(measured="tests/data/nccl-tests/nccl-tests_5coll_H100_1node_8gpu_xxrjun.txt",
                                   topology="dgx-h100", calibration=f"{BAD}/calibration/unknown_key.json")),
    Case("calibrate-runs/bad_split",
         lambda: stepcast.calibrate(runs="tests/data/runs/vtrain_single_node_a100.csv", fit_on="nodes=1")),
    Case("runs/empty", lambda: stepcast.validate(runs=f"{BAD}/runs/empty.csv")),
    Case("operators/bare_workload",
         lambda: stepcast.operators(workload="seed-7b", topology="p4d-24xlarge", nodes=1, plan="fsdp=8")),
    Case("search-bare-workload",
         lambda: stepcast.search(workload="seed-7b", topology="p4d-24xlarge", global_batch=8),
         args="search --workload workloads/seed-7b.json --topology topologies/p4d-24xlarge.json --global-batch 8",
         exit_code=2, message="plan search needs a workload with a transformer shape"),
    Case("table-price-needs-tokens",
         lambda: stepcast.table(workloads="llama2-7b", topologies="p4d-24xlarge", gpus=8, global_batch=8, price=4),
         args="table --workloads workloads/llama2-7b.json --topologies topologies/p4d-24xlarge.json --gpus 8 "
              "--global-batch 8 --price-per-gpu-hour 4",
         exit_code=2, message="--price: needs --tokens"),
    Case("moe2/moe_does_not_fit_hint",
         lambda: stepcast.memory(workload="deepseek-v3", topology="dgx-h100", nodes=16, plan="dp=128,ep=8,flash=on",
                                 global_batch=1024, seq=4096)),
    Case("moe2/moe_does_not_fit_no_fsdp",
         lambda: stepcast.predict(workload="mixtral-8x22b", topology="dgx-h100", nodes=4,
                                  plan="dp=32,ep=8,zero=1,recompute=full,flash=on", global_batch=128, seq=4096)),
    Case("simulate-does-not-fit",
         lambda: stepcast.simulate(workload="llama3-70b", topology="dgx-h100", nodes=1, plan="dp=8",
                                   global_batch=8, seq=2048),
         args="simulate --workload workloads/llama3-70b.json --topology topologies/dgx-h100.json --nodes 1 "
              "--plan dp=8 --global-batch 8 --seq 2048",
         # 70.55 B parameters x 16 bytes of Adam mixed-precision state = 1.13 TB: even sharded
         # eight ways (141 GB) it exceeds an 80 GB H100, so no change of plan on 8 GPUs helps.
         exit_code=3, message="nothing tried fits these 8 GPUs"),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_the_module_raises_what_the_command_exits_with(case):
    done = run_cli(*case.args)
    assert done.returncode == case.exit_code, done.stderr
    expected_class = {2: stepcast.InputError, 3: stepcast.Infeasible}[case.exit_code]
    with pytest.raises(expected_class) as raised:
        case.call()
    # Exit 2 names the rule in its error; exit 3 prints its hint with the table, then refuses.
    assert case.message in (str(raised.value) if case.exit_code == 2 else done.stdout)
    prefix = {2: "stepcast: error: ", 3: "stepcast: infeasible: "}[case.exit_code]
    assert prefix + str(raised.value) + "\n" == done.stderr
    if case.exit_code == 3:
        # The result the command prints before it refuses, and the memory figures from it.
        printed = run_cli(*case.args, "--json")
        assert printed.returncode == 3
        error = raised.value
        assert error.result == json.loads(printed.stdout)
        assert error.headroom_bytes < 0
        assert error.memory_per_gpu_bytes - error.gpu_memory_bytes == pytest.approx(-error.headroom_bytes, rel=1e-9)


def test_a_workload_dict_is_checked_as_its_file_and_its_errors_name_the_argument():
    file = ROOT / BAD / "workload/unknown_key.json"
    with pytest.raises(stepcast.InputError) as from_file:
        stepcast.memory(workload=str(file), plan="dp=1")
    with pytest.raises(stepcast.InputError) as from_dict:
        stepcast.memory(workload=json.loads(file.read_text()), plan="dp=1")
    assert (from_dict.value.file, from_dict.value.pointer) == ("workload (dict)", "/shape/hiden")
    assert from_dict.value.message == from_file.value.message
    assert from_dict.value.message.startswith('unknown key "hiden" (allowed here: layers, hidden, heads')


def test_an_unknown_shipped_name_is_refused_with_the_nearest_one():
    with pytest.raises(stepcast.InputError) as raised:
        stepcast.predict(workload="llama2-7c", topology="dgx-a100", gpus=8, plan="fsdp=8")
    assert raised.value.file == "llama2-7c"
    assert raised.value.message.startswith("no such file, nor a shipped workload of that name; did you mean 'llama2-7b'?")


@pytest.mark.parametrize("kwargs, message", [
    (dict(gpus=0), "--gpus: must be a number > 0, got 0"),
    (dict(global_batch=6.5), "--global-batch: must be a whole number, got 6.5"),
    (dict(achieved_fraction=1.5), "--achieved-fraction: must be in (0, 1], got 1.5"),
])
def test_arguments_are_checked_as_the_command_checks_its_options(kwargs, message):
    with pytest.raises(stepcast.InputError) as raised:
        stepcast.predict(**{"workload": "llama2-7b", "topology": "dgx-a100", "plan": "fsdp=8", **kwargs})
    assert str(raised.value) == message


def test_bad_input_is_a_value_error_and_the_interpreter_goes_on():
    # An InputError is a ValueError too, so code that catches ValueError catches bad input.
    with pytest.raises(ValueError):
        stepcast.memory(workload="llama2-13b", plan="tp=3")
    with pytest.raises(stepcast.Error):
        stepcast.memory(workload="llama2-13b", plan="tp=3")
    assert stepcast.memory(workload="llama2-13b", plan="tp=4")["gpus"] == 4


def test_an_unsharded_plan_is_refused_holding_at_least_16_bytes_per_parameter():
    with pytest.raises(stepcast.Infeasible) as raised:
        stepcast.predict(workload="llama3-70b", topology="dgx-h100", nodes=1, plan="dp=8", global_batch=8, seq=2048)
    error = raised.value
    # Mixed-precision Adam, unsharded (ZeRO, Rajbhandari et al. 2020): 2 + 2 + 12 bytes per
    # parameter on every GPU, activations on top; 70.6e9 parameters (Llama 3 70B) need over 1.1 TB.
    assert error.result["parameters"] == pytest.approx(70.6e9, rel=0.01)
    assert error.memory_per_gpu_bytes > 16 * error.result["parameters"]
    assert error.gpu_memory_bytes == 80 * 2**30  # topologies/dgx-h100.json: "80 GiB"
