// `stepcast simulate --seeds N` through the real executable: the seeds' step times and their summary.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "support/run_stepcast.hpp"

namespace simulate_seeds_cli_test {

namespace {

const std::string kSimulate =
    "simulate --workload workloads/llama2-7b.json --topology topologies/dgx-h100.json --nodes 2 --plan fsdp=16,mbs=1 "
    "--global-batch 256 --seq 2048 --json";

}  // namespace

TEST_SUITE("report.simulate_seeds") {
  TEST_CASE("no straggler: nothing is random, so every seed gives seed 1's step time") {
    const auto doc = nlohmann::json::parse(stepcast::test::run_stepcast(kSimulate + " --seeds 3"));
    const auto& seeds = doc["seeds"];
    REQUIRE(seeds["count"] == 3);
    for (const auto& t : seeds["step_time_s"]) CHECK(t.get<double>() == doc["step_time_s"].get<double>());
    CHECK(seeds["max_s"].get<double>() == doc["step_time_s"].get<double>());
  }

  TEST_CASE("step noise: seed 1 of the summary is the table's step, and the seeds differ") {
    const auto doc =
        nlohmann::json::parse(stepcast::test::run_stepcast(kSimulate + " --straggler step-cv=0.05 --seeds 6"));
    const auto& times = doc["seeds"]["step_time_s"];
    REQUIRE(times.size() == 6);
    CHECK(times[0].get<double>() == doc["step_time_s"].get<double>());
    // Each seed draws other per-GPU factors; six identical maxima of 16 draws would be no noise at all.
    const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
    CHECK(lo->get<double>() < hi->get<double>());
    CHECK(doc["seeds"]["max_s"].get<double>() == hi->get<double>());
  }
}

}  // namespace simulate_seeds_cli_test
