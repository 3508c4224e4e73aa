// Fitting the compute model's kernel parameters to training runs: the fit recovers parameters a
// synthetic dataset was generated with, never reads its held-out runs, and the shipped overheads
// are what it finds on the named vTrain rows.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/calibrate/runs_fit.hpp"
#include "stepcast/calibrate/training_runs.hpp"
#include "stepcast/cost/kernel_model.hpp"
#include "support/input_error_text.hpp"

namespace runs_fit_test {

using namespace stepcast;
using namespace stepcast::calibrate;

namespace {

const std::filesystem::path kRoot = STEPCAST_SOURCE_DIR;
const std::filesystem::path kVtrain = kRoot / "tests/data/runs/vtrain_single_node_a100.csv";

cost::Calibration with_overheads(double host_us, double kernel_us) {
  cost::Calibration c;
  c.compute = cost::ComputeCalibration{};
  c.compute->host_overhead = microseconds(host_us);
  c.compute->kernel_overhead = microseconds(kernel_us);
  c.compute->source = "test";
  return c;
}

const std::vector<ComputeParameter> kOverheads = {ComputeParameter::kHostOverhead, ComputeParameter::kKernelOverhead};

}  // namespace

TEST_SUITE("calibrate.runs_fit") {
  TEST_CASE("the fit recovers the overheads a synthetic set of runs was made with (45 us host, 12 us kernel)") {
    // The vTrain shapes and plans, with each run's throughput replaced by the model's own at
    // host 45 us and kernel 12 us: a fit from 20 us and 2 us must find those two values.
    auto runs = read_training_runs({kVtrain}, kRoot);
    const cost::Calibration truth = with_overheads(45.0, 12.0);
    for (auto& r : runs) {
      const EnginePrediction p = predict_analytically(r, &truth);
      r.measured = {};
      r.measured.step_time = p.step_time;
    }
    const RunsFit fit = fit_compute_to_runs(runs, fit_mask(runs, parse_run_split("gpus=2", "test")), kOverheads,
                                            with_overheads(20.0, 2.0), "synthetic");
    CHECK(fit.compute.host_overhead->value() == doctest::Approx(45e-6).epsilon(1e-3));
    CHECK(fit.compute.kernel_overhead->value() == doctest::Approx(12e-6).epsilon(1e-3));
    CHECK(fit.fit_after.max_abs_error_pct < 0.1);
    CHECK(fit.held_after.max_abs_error_pct < 0.1);
    CHECK(fit.fit_after.runs == 240);
    CHECK(fit.held_after.runs == 1200);
  }

  TEST_CASE(
      "fitting on the 2-GPU rows never reads the others: scaling their measurements tenfold changes nothing fitted") {
    auto runs = read_training_runs({kVtrain}, kRoot);
    const auto mask = fit_mask(runs, parse_run_split("gpus=2", "test"));
    const RunsFit first = fit_compute_to_runs(runs, mask, kOverheads, with_overheads(20.0, 2.0), "vtrain");
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (!mask[i]) runs[i].measured.step_time = *runs[i].measured.step_time * 10.0;
    }
    const RunsFit second = fit_compute_to_runs(runs, mask, kOverheads, with_overheads(20.0, 2.0), "vtrain");
    CHECK(second.compute.host_overhead->value() == first.compute.host_overhead->value());
    CHECK(second.compute.kernel_overhead->value() == first.compute.kernel_overhead->value());
    CHECK(second.fit_after.mean_abs_error_pct == first.fit_after.mean_abs_error_pct);
    CHECK(second.held_after.mean_abs_error_pct > 5.0 * first.held_after.mean_abs_error_pct);
  }

  TEST_CASE(
      "the shipped overheads are the fit on vTrain's 2-GPU rows (src/cost/kernel_tables.hpp), reached from 20 us and 2 "
      "us") {
    const auto runs = read_training_runs({kVtrain}, kRoot);
    const RunsFit fit = fit_compute_to_runs(runs, fit_mask(runs, parse_run_split("gpus=2", "test")), kOverheads,
                                            with_overheads(20.0, 2.0), "vtrain");
    const auto defaults = cost::default_kernel_params(runs.front().topology->gpu(), runs.front().plan);
    CHECK(fit.compute.host_overhead->value() == doctest::Approx(defaults.host_overhead.value()).epsilon(0.01));
    CHECK(fit.compute.kernel_overhead->value() == doctest::Approx(defaults.kernel_overhead.value()).epsilon(0.01));
  }

  TEST_CASE("splits combine conditions, every-other counts the runs that meet them") {
    const auto runs = read_training_runs({kVtrain}, kRoot);
    const auto mask = fit_mask(runs, parse_run_split("gpus=4,every-other", "test"));
    std::size_t fitted = 0;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (mask[i]) {
        CHECK(runs[i].gpus == 4);
        ++fitted;
      }
    }
    CHECK(fitted == 240);  // 480 rows on 4 GPUs, every other one
    CHECK(test::input_error_text([] { (void)parse_run_split("gpus", "--fit-on"); }) ==
          "--fit-on: expected every-other or KEY=VALUE (KEY one of gpus, group, workload, topology, gpu, precision), "
          "comma-separated; "
          "got \"gpus\"");
  }

  TEST_CASE("a fit needs as many runs as parameters, and runs of one GPU model") {
    const auto runs = read_training_runs({kRoot / "tests/data/runs/llm_foundry_mpt.csv"}, kRoot);
    CHECK(test::input_error_text([&] {
            (void)fit_compute_to_runs(runs, fit_mask(runs, parse_run_split("every-other", "test")), kOverheads, {},
                                      "foundry");
          }).find("one calibration describes one GPU model") != std::string::npos);
    CHECK(test::input_error_text([&] {
            (void)fit_compute_to_runs(runs, fit_mask(runs, parse_run_split("group=nothing", "test")), kOverheads, {},
                                      "foundry");
          }) == "foundry: 0 runs selected to fit 2 parameters: need at least as many runs as parameters");
  }
}

}  // namespace runs_fit_test
