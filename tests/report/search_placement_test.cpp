// `search --gpus N` on GB200 NVL72 racks where N fills no whole number of racks: the search runs
// on part of each rack, as NVIDIA's Megatron-Bridge GB200 runs of 128 and 256 GPUs ran on 64 of
// each rack's 72 (16 of 18 trays), rather than refusing the count.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "support/run_stepcast.hpp"

namespace search_placement_test {

using namespace stepcast;

TEST_SUITE("report.search_placement") {
  TEST_CASE("128 GB200 GPUs: 64 of each of 2 racks, said in a note, and #1 priced on that placement") {
    const std::string where = "--workload llama3-8b --topology gb200-nvl72 --gpus 128";
    const auto report =
        nlohmann::json::parse(test::run_stepcast("search " + where + " --global-batch 256 --refine 0 --top 1 --json"));
    bool said = false;
    for (const auto& n : report.at("notes")) {
      said =
          said || n.get<std::string>().starts_with(
                      "placement: 128 GPUs fill no whole number of 72-GPU NVLink domains: the search runs them on 64 "
                      "of each of 2 domains");
    }
    CHECK(said);
    const nlohmann::json& plans = report.at("tables").at(0);
    REQUIRE(plans.at("name") == "plans");
    const auto& best = plans.at("rows").at(0);
    const auto predicted =
        nlohmann::json::parse(test::run_stepcast("predict " + where + " --gpus-per-domain 64 --plan \"" +
                                                 best.at("plan").get<std::string>() + ",gbs=256\" --json"));
    CHECK(predicted.at("step_time_s").get<double>() == doctest::Approx(best.at("step_time_s").get<double>()));
    // Without the search's choice the same count is refused, naming the part of each rack that fits.
    const test::CommandResult refused =
        test::run_stepcast_with_status("predict " + where + " --plan \"dp=128,gbs=256\"");
    CHECK(refused.exit_code == 2);
    CHECK(refused.output.find("--gpus-per-domain 64 runs 2 domains of 64") != std::string::npos);
  }
}

}  // namespace search_placement_test
