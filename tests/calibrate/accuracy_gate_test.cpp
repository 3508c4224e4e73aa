// The accuracy gate: each development source, predicted with the model's free parameters fitted
// on the other sources (tests/data/loso/, written by scripts/fit-defaults --leave-one-out), must
// keep its median |error| within one point of the figure committed beside those fits.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/run_stepcast.hpp"

namespace accuracy_gate_test {

namespace {

/// The median |predicted / measured throughput - 1| (percent) over the compared runs, from each
/// run's first measured figure (a step time t gives measured t / predicted t - 1), as
/// scripts/fit-defaults computes the committed figure (median of an even count: mean of the middle two).
double median_abs_throughput_error(const nlohmann::json& result) {
  std::vector<double> errors;
  for (const auto& run : result.at("runs")) {
    if (run.at("status") != "compared") continue;
    for (const auto& m : run.at("metrics")) {
      if (m.at("metric") == "peak_memory_per_gpu_bytes") continue;
      const double e = m.at("metric") == "step_time_s"
                           ? 100.0 * (m.at("measured").get<double>() / m.at("predicted").get<double>() - 1.0)
                           : m.at("error_pct").get<double>();
      errors.push_back(std::fabs(e));
      break;
    }
  }
  REQUIRE_FALSE(errors.empty());
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  return n % 2 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2.0;
}

}  // namespace

TEST_SUITE("calibrate.accuracy_gate") {
  TEST_CASE("no source's leave-one-source-out median |error| rises more than one point above its committed figure") {
    std::ifstream in(std::string(STEPCAST_SOURCE_DIR) + "/tests/data/loso/figures.json");
    REQUIRE(in.good());
    const nlohmann::json figures = nlohmann::json::parse(in).at("sources");
    REQUIRE(figures.size() >= 4);
    for (const auto& item : figures.items()) {
      const std::string source = item.key();
      const nlohmann::json& f = item.value();
      CAPTURE(source);
      const std::string out =
          stepcast::test::run_stepcast("validate --runs " + f.at("runs_file").get<std::string>() + " --calibration " +
                                       f.at("calibration").get<std::string>() + " --json");
      const double median = median_abs_throughput_error(nlohmann::json::parse(out));
      CHECK(median <= f.at("median_abs_error_pct").get<double>() + 1.0);
    }
  }
}

}  // namespace accuracy_gate_test
