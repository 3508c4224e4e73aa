// `stepcast validate --runs` through the real executable: each run predicted exactly as
// `stepcast predict` (or `simulate`, with --engine des) predicts the same inputs, every run
// accounted for, the plot drawn and the gate applied.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "stepcast/core/input_file.hpp"
#include "support/markup_check.hpp"
#include "support/run_stepcast.hpp"

namespace validate_runs_cli_test {

namespace {

using stepcast::test::run_stepcast;
using stepcast::test::run_stepcast_with_status;

std::string write_runs(const std::string& name, const std::string& text) {
  const auto path =
      std::filesystem::temp_directory_path() / ("stepcast_validate_runs_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path) << text;
  return path.string();
}

// llm-foundry's MPT-7B on 8 H100s at sequence 8192 (tests/data/runs/llm_foundry_mpt.csv, row
// llm-foundry:38: 55481 tokens/s), and the same run as predict's and simulate's options.
const std::string kRow =
    "run,workload,topology,nodes,gpus,plan,global_batch,seq_len,precision,tokens_per_s\n"
    "llm-foundry:38,mpt-7b,dgx-h100,1,8,\"fsdp=full,mbs=8,recompute=full,flash=fa2\",128,8192,bf16,55481\n";
const std::string kPlanArgs =
    "--workload workloads/mpt-7b.json --topology topologies/dgx-h100.json --nodes 1 --plan "
    "fsdp=full,mbs=8,recompute=full,flash=fa2 "
    "--global-batch 128 --seq 8192 --precision bf16 --json";

}  // namespace

TEST_SUITE("calibrate.validate_runs_cli") {
  TEST_CASE("each run's prediction is what `stepcast predict` prints for the same inputs") {
    const std::string file = write_runs("one.csv", kRow);
    const auto runs = nlohmann::json::parse(run_stepcast("validate --runs " + file + " --json"));
    const auto predict = nlohmann::json::parse(run_stepcast("predict " + kPlanArgs));
    const auto memory = nlohmann::json::parse(run_stepcast("memory " + kPlanArgs));
    const auto& row = runs.at("runs").at(0);
    REQUIRE(row.at("status") == "compared");
    CHECK(row.at("plan") == predict.at("plan"));
    CHECK(row.at("predicted_step_time_s").get<double>() ==
          doctest::Approx(predict.at("step_time_s").get<double>()).epsilon(1e-8));
    CHECK(row.at("predicted_memory_per_gpu_bytes").get<double>() ==
          doctest::Approx(memory.at("total_bytes_per_gpu").get<double>()).epsilon(1e-8));
    // 128 x 8192 = 1048576 tokens per step.
    const auto& tokens = row.at("metrics").at(0);
    CHECK(tokens.at("metric") == "tokens_per_s");
    CHECK(tokens.at("measured").get<double>() == 55481.0);
    CHECK(tokens.at("predicted").get<double>() ==
          doctest::Approx(1048576.0 / predict.at("step_time_s").get<double>()).epsilon(1e-8));
  }

  TEST_CASE("--engine des predicts each run as `stepcast simulate` does") {
    const std::string file = write_runs("one_des.csv", kRow);
    const auto runs = nlohmann::json::parse(run_stepcast("validate --runs " + file + " --engine des --json"));
    const auto simulate = nlohmann::json::parse(run_stepcast("simulate " + kPlanArgs));
    CHECK(runs.at("engine") == "des");
    CHECK(runs.at("runs").at(0).at("predicted_step_time_s").get<double>() ==
          doctest::Approx(simulate.at("step_time_s").get<double>()).epsilon(1e-8));
  }

  TEST_CASE("an inexpressible run is printed with its place and reason, and counted") {
    const std::string file = write_runs(
        "two.csv", kRow + "offload,mpt-7b,dgx-h100,1,8,\"fsdp=full,mbs=8,offload=cpu\",128,8192,bf16,50000\n");
    const std::string out = run_stepcast("validate --runs " + file);
    CHECK(out.find("Training runs: 2 from ") != std::string::npos);
    CHECK(out.find("Not predicted: 1 of 2 runs the model cannot express") != std::string::npos);
    CHECK(out.find("  offload (" + file + ":3): plan key \"offload\" not modelled by stepcast") != std::string::npos);
    CHECK(out.find("Absolute error over the 1 compared runs") != std::string::npos);
    const auto j = nlohmann::json::parse(run_stepcast("validate --runs " + file + " --json"));
    CHECK(j.at("runs").size() == 2);
    CHECK(j.at("inexpressible") == 1);
    CHECK(j.at("runs").at(1).at("status") == "inexpressible");
  }

  TEST_CASE("--plot draws one marker per compared run with a throughput, and the y = x and +-10% lines") {
    const std::string svg =
        (std::filesystem::temp_directory_path() / ("stepcast_runs_plot_" + std::to_string(::getpid()) + ".svg"))
            .string();
    const std::string out = run_stepcast("validate --runs tests/data/runs/vtrain_single_node_a100.csv --plot " + svg);
    CHECK(out.find("wrote " + svg) != std::string::npos);
    const std::string text = stepcast::read_text_file(svg);
    std::string why;
    CHECK_MESSAGE(stepcast::test::tags_balanced(text, why), why);
    // 1440 runs in 24 groups (8 shapes x 2, 4, 8 GPUs); each group's marker once more in the legend.
    const std::size_t markers = stepcast::test::count_of(text, "fill-opacity=\"0.85\"");
    CHECK(markers == 1440 + 24);
    CHECK(stepcast::test::count_of(text, "stroke-dasharray=\"6 4\"") == 2);  // the two band lines
    CHECK(text.find("y = x (no error)") != std::string::npos);
  }

  TEST_CASE("--max-median-error exits 1 when a figure's median error is above it") {
    const std::string file = write_runs("gate.csv", kRow);
    CHECK(run_stepcast_with_status("validate --runs " + file + " --max-median-error 1000").exit_code == 0);
    const auto failed = run_stepcast_with_status("validate --runs " + file + " --max-median-error 0.0001");
    CHECK(failed.exit_code == 1);
    CHECK(failed.output.find("median |error| above --max-median-error") != std::string::npos);
  }

  TEST_CASE("--calibration reaches each run as it reaches predict") {
    // The kernel-bench fixture's bf16 GEMMs give the calibration its GEMM efficiency (their ideal
    // time over their busy time, tests/calibrate/kernel_bench_test.cpp). The compute model's default
    // is ml-engineering's maximum (792.1 / 989) times the shipped sustained share, so the calibrated
    // step is longer where that default is above the calibration's, shorter where it is below.
    const std::string cal =
        (std::filesystem::temp_directory_path() / ("stepcast_runs_cal_" + std::to_string(::getpid()) + ".json"))
            .string();
    run_stepcast(
        "calibrate --measured tests/data/kernel-bench/synthetic_h100.json --topology topologies/dgx-h100.json -o " +
        cal);
    const std::string file = write_runs("calibrated.csv", kRow);
    const auto runs =
        nlohmann::json::parse(run_stepcast("validate --runs " + file + " --calibration " + cal + " --json"));
    const auto uncalibrated = nlohmann::json::parse(run_stepcast("validate --runs " + file + " --json"));
    const auto predict = nlohmann::json::parse(run_stepcast("predict " + kPlanArgs + " --calibration " + cal));
    CHECK(runs.at("calibration") == cal);
    const double calibrated = runs.at("runs").at(0).at("predicted_step_time_s").get<double>();
    CHECK(calibrated == doctest::Approx(predict.at("step_time_s").get<double>()).epsilon(1e-8));
    const double measured_efficiency =
        nlohmann::json::parse(std::ifstream(cal)).at("compute").at("gemm_efficiency").at("bf16").get<double>();
    const double shipped_default =
        792.1 / 989.0 *
        nlohmann::json::parse(std::ifstream(std::string(STEPCAST_SOURCE_DIR) + "/topologies/model-defaults.json"))
            .at("parameters")
            .at("sustained_tensor_fraction")
            .at("value")
            .get<double>();
    const double uncalibrated_step = uncalibrated.at("runs").at(0).at("predicted_step_time_s").get<double>();
    CHECK((calibrated > uncalibrated_step) == (shipped_default > measured_efficiency));
    CHECK(calibrated != doctest::Approx(uncalibrated_step));
  }
}

}  // namespace validate_runs_cli_test
