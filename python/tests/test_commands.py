"""Every function returns the dict the executable's --json prints for the same options: the same
keys and the same numbers, bit for bit (the module runs the same C++ functions; the executable is
the oracle). One hand derivation checks a figure through the module alone."""

import json
import re

import pytest

import stepcast
from conftest import ROOT, cli_json, run_cli

PREDICT = dict(workload="llama2-7b", topology="dgx-a100", gpus=8, plan="fsdp=8", global_batch=64, seq=4096)
PREDICT_ARGS = ["--workload", "workloads/llama2-7b.json", "--topology", "topologies/dgx-a100.json", "--gpus", "8",
                "--plan", "fsdp=8", "--global-batch", "64", "--seq", "4096"]


def test_predict_equals_the_command_and_its_step_time_prints_byte_for_byte():
    result = stepcast.predict(**PREDICT)
    done = run_cli("predict", *PREDICT_ARGS, "--json")
    assert done.returncode == 0, done.stderr
    assert result == json.loads(done.stdout)
    # The figure as the command writes it, and as Python prints the module's float.
    printed = re.search(r'"step_time_s": ([^,\n]+)', done.stdout).group(1)
    assert repr(result["step_time_s"]) == printed


def test_predict_with_explain_equals_the_command():
    assert stepcast.predict(**PREDICT, explain=True) == cli_json("predict", *PREDICT_ARGS, "--json", "--explain")


def test_memory_equals_the_command_and_fsdp8_holds_a_sixteenth_of_16_bytes_per_parameter():
    result = stepcast.memory(workload="seed-7b", plan="fsdp=8")
    assert result == cli_json("memory", "--workload", "workloads/seed-7b.json", "--plan", "fsdp=8", "--json")
    # The seed's check (DESIGN.md; ZeRO, Rajbhandari et al. 2020): mixed-precision Adam holds
    # 2 + 2 + 12 = 16 bytes per parameter; 8-way FSDP shards all of it: 7e9 x 16 / 8 = 14e9 B.
    assert result["model_state_bytes_per_gpu"] == pytest.approx(7e9 * 16 / 8, rel=1e-9)


def test_simulate_equals_the_command():
    args = ["--workload", "workloads/llama2-7b.json", "--topology", "topologies/dgx-a100.json", "--gpus", "8",
            "--plan", "tp=2,pp=2,mbs=1", "--global-batch", "16", "--seq", "2048", "--seed", "3"]
    result = stepcast.simulate(workload="llama2-7b", topology="dgx-a100", gpus=8, plan="tp=2,pp=2,mbs=1",
                               global_batch=16, seq=2048, seed=3)
    assert result == cli_json("simulate", *args, "--json")


def test_search_equals_the_command():
    result = stepcast.search(workload="llama2-7b", topology="p4d-24xlarge", nodes=1, global_batch=16, refine=2,
                             top=5)
    expected = cli_json("search", "--workload", "workloads/llama2-7b.json", "--topology",
                        "topologies/p4d-24xlarge.json", "--nodes", "1", "--global-batch", "16", "--refine", "2",
                        "--top", "5", "--json")
    assert isinstance(result, stepcast.Report)
    assert result == expected
    assert len(result.table("plans")["rows"]) == 5


def test_search_and_table_with_doc_len_equal_the_commands():
    search = stepcast.search(workload="llama3-8b", topology="dgx-h100", gpus=8, global_batch=64, seq=8192,
                             doc_len=512, top=2, refine=0)
    assert search == cli_json("search", "--workload", "workloads/llama3-8b.json", "--topology",
                              "topologies/dgx-h100.json", "--gpus", "8", "--global-batch", "64", "--seq", "8192",
                              "--doc-len", "512", "--top", "2", "--refine", "0", "--json")
    table = stepcast.table(workloads="llama3-8b", topologies="dgx-h100", gpus=8, global_batch=64, seq=8192,
                           doc_len=512)
    assert table == cli_json("table", "--workloads", "workloads/llama3-8b.json", "--topologies",
                             "topologies/dgx-h100.json", "--gpus", "8", "--global-batch", "64", "--seq", "8192",
                             "--doc-len", "512", "--format", "json")


def test_search_and_table_with_lora_equal_the_commands():
    search = stepcast.search(workload="llama3-70b", topology="dgx-h100", gpus=8, global_batch=64, seq=4096, peft="lora",
                             lora_rank=16, lora_targets="qkv+fc2", top=2, refine=0)
    assert search == cli_json("search", "--workload", "workloads/llama3-70b.json", "--topology",
                              "topologies/dgx-h100.json", "--gpus", "8", "--global-batch", "64", "--seq", "4096",
                              "--peft", "lora", "--lora-rank", "16", "--lora-targets", "qkv+fc2", "--top", "2",
                              "--refine", "0", "--json")
    table = stepcast.table(workloads="llama3-70b", topologies="dgx-h100", gpus=8, global_batch=64, seq=4096,
                           peft="lora", lora_rank=16, lora_targets="qkv+fc2")
    assert table == cli_json("table", "--workloads", "workloads/llama3-70b.json", "--topologies",
                             "topologies/dgx-h100.json", "--gpus", "8", "--global-batch", "64", "--seq", "4096",
                             "--peft", "lora", "--lora-rank", "16", "--lora-targets", "qkv+fc2", "--format", "json")


def test_search_and_table_with_an_optimizer_equal_the_commands():
    search = stepcast.search(workload="llama3-8b", topology="dgx-h100", gpus=8, global_batch=64, seq=8192,
                             optimizer="muon", top=2, refine=0)
    assert search == cli_json("search", "--workload", "workloads/llama3-8b.json", "--topology",
                              "topologies/dgx-h100.json", "--gpus", "8", "--global-batch", "64", "--seq", "8192",
                              "--optimizer", "muon", "--top", "2", "--refine", "0", "--json")
    table = stepcast.table(workloads="llama3-8b", topologies="dgx-h100", gpus=8, global_batch=64, seq=8192,
                           optimizer="muon")
    assert table == cli_json("table", "--workloads", "workloads/llama3-8b.json", "--topologies",
                             "topologies/dgx-h100.json", "--gpus", "8", "--global-batch", "64", "--seq", "8192",
                             "--optimizer", "muon", "--format", "json")


def test_search_compare_equals_the_command_and_its_terms_add_up():
    plan = "dp=2,tp=4,sp=on"
    result = stepcast.search(workload="llama2-7b", topology="p4d-24xlarge", nodes=1, global_batch=16, refine=0,
                             top=3, compare=plan)
    expected = cli_json("search", "--workload", "workloads/llama2-7b.json", "--topology",
                        "topologies/p4d-24xlarge.json", "--nodes", "1", "--global-batch", "16", "--refine", "0",
                        "--top", "3", "--compare", plan, "--json")
    assert result == expected
    rows = result.table("compare")["rows"]
    # The step is compute + bubble + exposed communication + optimizer: the terms add up to it.
    assert rows[-1]["term"] == "step time"
    assert sum(r["compared_s"] for r in rows[:-1]) == pytest.approx(rows[-1]["compared_s"], rel=1e-6)


def test_search_compares_a_list_of_plans_as_repeated_options():
    plans = ["dp=2,tp=4,sp=on", "dp=8"]
    result = stepcast.search(workload="llama2-7b", topology="p4d-24xlarge", nodes=1, global_batch=16, refine=0,
                             top=3, compare=plans)
    expected = cli_json("search", "--workload", "workloads/llama2-7b.json", "--topology",
                        "topologies/p4d-24xlarge.json", "--nodes", "1", "--global-batch", "16", "--refine", "0",
                        "--top", "3", "--compare", plans[0], "--compare", plans[1], "--json")
    assert result == expected
    notes = [n for n in result["notes"] if n.startswith("compared: ")]
    assert notes[0].startswith("compared: dp=2,tp=4,") and notes[1].startswith("compared: dp=8,")


def test_table_equals_the_command():
    result = stepcast.table(workloads=["llama2-7b"], topologies=["dgx-a100"], gpus=[8, 16], global_batch=64,
                            tokens=1e12)
    expected = cli_json("table", "--workloads", "workloads/llama2-7b.json", "--topologies",
                        "topologies/dgx-a100.json", "--gpus", "8,16", "--global-batch", "64", "--tokens", "1e12",
                        "--format", "json")
    assert result == expected
    assert len(result.table("capacity")["rows"]) == 2


def test_collective_equals_the_command_for_one_size_and_a_sweep():
    one = stepcast.collective(op="all-reduce", size="1 GiB", topology="dgx-h100", nodes=2, explain=True)
    assert one == cli_json("collective", "--op", "all-reduce", "--size", "1 GiB", "--topology",
                           "topologies/dgx-h100.json", "--nodes", "2", "--explain", "--json")
    sweep = stepcast.collective(op="all-gather", sizes="1MiB:64MiB:4", topology="flat-400gbps", ranks=8,
                                algorithm="auto")
    assert sweep == cli_json("collective", "--op", "all-gather", "--sizes", "1MiB:64MiB:4", "--topology",
                             "topologies/flat-400gbps.json", "--ranks", "8", "--algorithm", "auto", "--json")
    # nccl-tests' convention (PERFORMANCE.md): a whole number of bytes is a size in B.
    assert stepcast.collective(op="all-reduce", size=1 << 30, topology="dgx-h100", nodes=2, explain=True) == one


NCCL_LOG = "tests/data/nccl-tests/nccl-tests_5coll_H100_1node_8gpu_xxrjun.txt"


def test_validate_equals_the_command_on_measured_collectives_and_on_training_runs():
    measured = stepcast.validate(measured=NCCL_LOG, topology="dgx-h100", nodes=1)
    assert measured == cli_json("validate", "--measured", NCCL_LOG, "--topology", "topologies/dgx-h100.json",
                                "--nodes", "1", "--json")
    runs = "tests/data/runs/vtrain_single_node_a100.csv"
    assert stepcast.validate(runs=runs) == cli_json("validate", "--runs", runs, "--json")


def test_calibrate_returns_the_file_the_command_writes(tmp_path):
    written = tmp_path / "cli.json"
    done = run_cli("calibrate", "--measured", NCCL_LOG, "--topology", "topologies/dgx-h100.json", "--nodes", "1",
                   "--holdout", "every-other", "-o", str(written))
    assert done.returncode == 0, done.stderr
    ours = tmp_path / "module.json"
    result = stepcast.calibrate(measured=NCCL_LOG, topology="dgx-h100", nodes=1, holdout="every-other",
                                output=ours)
    assert result == json.loads(written.read_text())
    assert ours.read_bytes() == written.read_bytes()
    # The report is the command's, less the line naming the file it wrote.
    assert result.report + f"wrote {written}\n" == done.stdout

    runs = "tests/data/runs/vtrain_single_node_a100.csv"
    done = run_cli("calibrate", "--runs", runs, "-o", str(written))
    assert done.returncode == 0, done.stderr
    assert stepcast.calibrate(runs=runs) == json.loads(written.read_text())


def test_operators_equals_the_command():
    result = stepcast.operators(workload="llama2-7b", topology="dgx-a100", gpus=8, plan="fsdp=8")
    assert result == cli_json("operators", "--workload", "workloads/llama2-7b.json", "--topology",
                              "topologies/dgx-a100.json", "--gpus", "8", "--plan", "fsdp=8", "--format", "json")


def test_workload_topology_and_plan_as_dicts_read_as_their_files():
    workload = json.loads((ROOT / "workloads/llama2-7b.json").read_text())
    topology = json.loads((ROOT / "topologies/dgx-a100.json").read_text())
    as_dicts = stepcast.predict(**dict(PREDICT, workload=workload, topology=topology, plan={"fsdp": 8}))
    assert as_dicts == stepcast.predict(**PREDICT)


def test_set_takes_a_dict_as_the_command_takes_repeated_set_options():
    two_nodes = dict(PREDICT, gpus=16, plan="fsdp=16")
    result = stepcast.predict(**two_nodes, set={"nics.bandwidth": "100 Gbps"})
    args = [a if a not in ("8", "fsdp=8") else {"8": "16", "fsdp=8": "fsdp=16"}[a] for a in PREDICT_ARGS]
    assert result == cli_json("predict", *args, "--set", "nics.bandwidth=100 Gbps", "--json")
    # Across two nodes FSDP's gathers cross the NICs: slower NICs, a longer step.
    assert result["step_time_s"] > stepcast.predict(**two_nodes)["step_time_s"]


def test_shipped_names_list_the_files_of_the_clone():
    assert "llama3-70b" in stepcast.shipped_names("workload")
    assert "dgx-h100" in stepcast.shipped_names("topology")


def test_predict_on_64_of_each_nvl72_rack_equals_the_command_and_says_the_part_it_uses():
    # 256 GPUs at 64 per NVL72 rack are 256 / 64 = 4 racks, 16 of 18 trays each.
    options = dict(workload="llama3-70b", topology="gb200-nvl72", gpus=256, gpus_per_domain=64,
                   plan="tp=8,pp=4,sp=on,zero=1", global_batch=256, seq=8192)
    result = stepcast.predict(**options)
    assert result == cli_json("predict", "--workload", "workloads/llama3-70b.json", "--topology",
                              "topologies/gb200-nvl72.json", "--gpus", "256", "--gpus-per-domain", "64", "--plan",
                              "tp=8,pp=4,sp=on,zero=1", "--global-batch", "256", "--seq", "8192", "--json")
    assert (result["gpus_per_domain"], result["domain_gpus"]) == (64, 72)
