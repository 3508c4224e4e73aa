// The scatter search's ties are read from: the model's errors on runs like the plan about their
// own source's median, so the offset between two clusters does not blur the ranking on one.
#include <doctest/doctest.h>

#include <cmath>

#include "stepcast/report/step_interval.hpp"

namespace error_scatter_test {

using namespace stepcast;

TEST_SUITE("report.error_scatter") {
  TEST_CASE("two sources 0.2 apart: the scatter is each one's own, exp(0.03) - 1, not the pooled exp(0.10) - 1") {
    // Source a: errors 0.00, 0.01, ..., 0.10 (median 0.05); source b: 0.20 .. 0.30 (median 0.25).
    // Less their own medians both are -0.05 .. 0.05: 22 deviations, median 0, and their |d| are
    // two 0s then four each of 0.01 .. 0.05; the 11th and 12th of 22 are 0.03: exp(0.03) - 1 =
    // 3.0455%. Pooled, the 22 errors' median is 0.15 and |e - 0.15| runs 0.05 .. 0.15 with median
    // 0.10: a tie rule four times wider than either cluster's runs scatter.
    calibrate::ResidualSet set;
    for (int i = 0; i <= 10; ++i) {
      set.by_class["Hopper, dense 3D"]["a"].push_back(0.01 * i);
      set.by_class["Hopper, dense 3D"]["b"].push_back(0.2 + 0.01 * i);
    }
    topology::GpuSpec h100;
    h100.name = "H100-SXM5-80GB";
    h100.generation = "hopper";
    workload::Workload model;
    model.shape = workload::TransformerShape{};  // dense: no routed experts
    plan::Plan dense;
    dense.dp = 8;
    const auto scatter = report::error_scatter_for(set, model, dense, h100);
    REQUIRE(scatter);
    CHECK(scatter->relative == doctest::Approx(std::exp(0.03) - 1.0));
    CHECK(scatter->runs == 22);
    CHECK(scatter->run_class == "Hopper, dense 3D");
  }

  TEST_CASE("a class of fewer than ten runs takes its GPU generation's, each about its own source's median") {
    // Four FSDP runs on Hopper, too few; the generation adds ten dense 3D runs of source b,
    // 0.30 .. 0.39 (median 0.345): the four (all 0.0, source a, deviations 0) and b's ten
    // deviations -0.045 .. 0.045 give fourteen |d|: four 0s, then two each of 0.005 .. 0.045; the
    // 7th and 8th are both 0.015: exp(0.015) - 1.
    calibrate::ResidualSet set;
    for (int i = 0; i < 4; ++i) {
      set.by_class["Hopper, FSDP/ZeRO-3"]["a"].push_back(0.0);
      set.by_generation["Hopper"]["a"].push_back(0.0);
    }
    for (int i = 0; i < 10; ++i) {
      set.by_class["Hopper, dense 3D"]["b"].push_back(0.3 + 0.01 * i);
      set.by_generation["Hopper"]["b"].push_back(0.3 + 0.01 * i);
    }
    topology::GpuSpec h100;
    h100.name = "H100-SXM5-80GB";
    h100.generation = "hopper";
    workload::Workload model;
    model.shape = workload::TransformerShape{};
    plan::Plan fsdp;
    fsdp.dp = 8;
    fsdp.sharding = plan::Sharding::kFsdpFull;
    fsdp.shard_group = 8;
    const auto scatter = report::error_scatter_for(set, model, fsdp, h100);
    REQUIRE(scatter);
    CHECK(scatter->run_class == "Hopper");
    CHECK(scatter->runs == 14);
    CHECK(scatter->relative == doctest::Approx(std::exp(0.015) - 1.0));
  }
}

}  // namespace error_scatter_test
