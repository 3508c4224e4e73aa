// The fit of the model's free parameters: it recovers the values a synthetic set of runs was made
// with, counts only the runs whose prediction depends on a parameter, keeps a parameter no run
// depends on at its start, and writes a file both the defaults loader and --calibration read.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "stepcast/calibrate/defaults_fit.hpp"
#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/calibrate/training_runs.hpp"
#include "stepcast/topology/model_parameters.hpp"
#include "support/scratch_folder.hpp"

namespace defaults_fit_test {

using namespace stepcast;
using namespace stepcast::calibrate;

namespace {

const std::filesystem::path kRoot = STEPCAST_SOURCE_DIR;

cost::Calibration with_parameters(double kernel_us, double host_us, double sustained) {
  cost::Calibration c;
  // The collective overhead is 20 us in the runs and at the start, whatever the shipped defaults say.
  c.parameters.values = {{"kernel_overhead", kernel_us * 1e-6},
                         {"host_overhead", host_us * 1e-6},
                         {"sustained_tensor_fraction", sustained},
                         {"collective_overhead", 20e-6}};
  for (const auto& [name, v] : c.parameters.values) c.parameters.sources[name] = "test";
  return c;
}

/// Each expressible run measured as the model predicts it under `truth`.
std::vector<TrainingRun> measured_as_predicted(std::vector<TrainingRun> runs, const cost::Calibration& truth) {
  for (auto& r : runs) {
    if (!r.expressible()) continue;
    const EnginePrediction p = predict_analytically(r, &truth);
    r.measured = {};
    r.measured.step_time = p.step_time;
  }
  return runs;
}

/// vTrain's A100 runs and SimuMax's B200 runs, each measured as the model predicts it under `truth`.
std::vector<TrainingRun> synthetic(const cost::Calibration& truth) {
  return measured_as_predicted(
      read_training_runs(
          {kRoot / "tests/data/runs/vtrain_single_node_a100.csv", kRoot / "tests/data/runs/simumax_b200.csv"}, kRoot),
      truth);
}

/// SimuMax's 31 Llama runs (their workloads written in the row) on a B200 whose figures no
/// parameter scales: the shipped dgx-b200 with its GPU written inline, every `scaled_by` taken out.
std::vector<TrainingRun> on_an_unscaled_b200(const std::filesystem::path& dir, const cost::Calibration& truth) {
  auto topology = nlohmann::json::parse(std::ifstream(kRoot / "topologies/dgx-b200.json"));
  auto gpu = nlohmann::json::parse(std::ifstream(kRoot / "topologies/gpus/b200-sxm-180gb.json"));
  for (auto& [precision, figure] : gpu["kernels"]["gemm"].items()) figure.erase("scaled_by");
  for (auto& [kernel, figures] : gpu["kernels"]["attention"].items()) {
    if (!figures.is_object()) continue;  // "default": the kernel's name
    for (const char* pass : {"forward", "backward"}) figures[pass].erase("scaled_by");
  }
  topology["gpu"] = gpu;
  std::ofstream(dir / "unscaled-b200.json") << topology.dump();
  std::ifstream in(kRoot / "tests/data/runs/simumax_b200.csv");
  std::ofstream out(dir / "runs.csv");
  for (std::string line; std::getline(in, line);) {
    const bool row = !line.starts_with('#') && !line.starts_with("run,");
    if (row && line.find("workloads/") != std::string::npos) continue;
    const auto at = line.find(",dgx-b200,");
    if (row && at != std::string::npos) line.replace(at, 10, ",unscaled-b200.json,");
    out << line << '\n';
  }
  out.close();
  return measured_as_predicted(read_training_runs({dir / "runs.csv"}, kRoot), truth);
}

}  // namespace

TEST_SUITE("calibrate.defaults_fit") {
  TEST_CASE("the fit recovers kernel 12 us, host 45 us and the sustained share 0.85 from runs made with them") {
    const auto runs = synthetic(with_parameters(12.0, 45.0, 0.85));
    const DefaultsFit fit = fit_defaults(runs, with_parameters(5.0, 20.0, 0.95));
    std::map<std::string, FittedParameter> by_name;
    for (const auto& p : fit.parameters) by_name[p.name] = p;
    CHECK(by_name["kernel_overhead"].value == doctest::Approx(12e-6).epsilon(1e-3));
    CHECK(by_name["host_overhead"].value == doctest::Approx(45e-6).epsilon(1e-3));
    CHECK(by_name["sustained_tensor_fraction"].value == doctest::Approx(0.85).epsilon(1e-3));
    CHECK(fit.rms_after < 1e-4);
    // Every run depends on the overheads and on the sustained share, which scales the A100's and
    // the B200's GEMM and attention figures alike (all kernels timed on their own)...
    CHECK(by_name["kernel_overhead"].runs == 1440 + 43);
    // ... less the few vTrain runs whose kernels run shorter than the host, at 45 us a kernel,
    // takes to issue them: kernel speed does not move those.
    CHECK(by_name["sustained_tensor_fraction"].runs > 1400 + 43);
    CHECK(by_name["sustained_tensor_fraction"].runs < 1440 + 43);
    CHECK(fit.runs_per_file.size() == 2);
  }

  TEST_CASE("a parameter no run depends on keeps its start and says so: the sustained share on an unscaled GPU") {
    const test::ScratchFolder dir("stepcast_defaults_fit_", "unscaled");
    const auto runs = on_an_unscaled_b200(dir.path, with_parameters(12.0, 45.0, 0.85));
    REQUIRE(runs.size() == 31);
    const DefaultsFit fit = fit_defaults(runs, with_parameters(5.0, 20.0, 0.95));
    std::map<std::string, FittedParameter> by_name;
    for (const auto& p : fit.parameters) by_name[p.name] = p;
    CHECK(by_name["sustained_tensor_fraction"].runs == 0);
    CHECK(by_name["sustained_tensor_fraction"].value == doctest::Approx(0.95));
    CHECK(fit.fitted.sources.at("sustained_tensor_fraction").starts_with("not fitted: no run of"));
    CHECK(fit.fitted.sources.at("sustained_tensor_fraction").find("kept at its start, 0.95") != std::string::npos);
    CHECK(by_name["kernel_overhead"].runs == 31);
    CHECK(by_name["kernel_overhead"].value == doctest::Approx(12e-6).epsilon(1e-3));
  }

  TEST_CASE("a measured parameter is held, not fitted: host 45 us measured, the others recovered beside it") {
    // Runs made with kernel 12 us, host 45 us, sustained 0.85; the base says host is measured at
    // 45 us. Held there, the two free parameters recover the values the runs were made with. Held at
    // 30 us instead, host stays at 30 us exactly whatever the runs say (the others absorb what they can).
    const auto runs = synthetic(with_parameters(12.0, 45.0, 0.85));
    cost::Calibration base = with_parameters(5.0, 45.0, 0.95);
    base.parameters.measured.insert("host_overhead");
    base.parameters.sources["host_overhead"] = "measured on an eager layer";
    const DefaultsFit fit = fit_defaults(runs, base);
    std::map<std::string, FittedParameter> by_name;
    for (const auto& p : fit.parameters) by_name[p.name] = p;
    CHECK(by_name["host_overhead"].measured);
    CHECK(by_name["host_overhead"].value == doctest::Approx(45e-6).epsilon(1e-12));
    CHECK(by_name["kernel_overhead"].value == doctest::Approx(12e-6).epsilon(1e-3));
    CHECK(by_name["sustained_tensor_fraction"].value == doctest::Approx(0.85).epsilon(1e-3));
    CHECK(fit.fitted.sources.at("host_overhead").starts_with("measured, not fitted ("));
    CHECK(fit.fitted.sources.at("host_overhead").ends_with("runs depend on it): measured on an eager layer"));

    base.parameters.values["host_overhead"] = 30e-6;
    const DefaultsFit held = fit_defaults(runs, base);
    for (const auto& p : held.parameters) {
      if (p.name == "host_overhead") CHECK(p.value == doctest::Approx(30e-6).epsilon(1e-12));
    }
    CHECK(held.rms_after > 1e-4);  // 30 us is not what the runs were made with
  }

  TEST_CASE("the written file is a defaults file and a calibration: both loaders read the fitted values") {
    const auto runs = synthetic(with_parameters(12.0, 45.0, 0.85));
    const DefaultsFit fit = fit_defaults(runs, with_parameters(5.0, 20.0, 0.95));
    const auto path = std::filesystem::temp_directory_path() / "stepcast_defaults_fit_test.json";
    std::ofstream(path) << defaults_json_text(fit);
    const topology::ModelParameters loaded = topology::load_model_parameters(path);
    CHECK(loaded.values.at("host_overhead").value == doctest::Approx(45e-6).epsilon(1e-3));
    const cost::Calibration cal = cost::load_calibration(path);
    CHECK(cal.parameters.values.at("sustained_tensor_fraction") == doctest::Approx(0.85).epsilon(1e-3));
    CHECK(cal.parameters.values.size() == topology::model_parameters().size());
  }
}

}  // namespace defaults_fit_test
