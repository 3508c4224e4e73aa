// `search --gpus N` on GB200 NVL72 racks where N fills no whole number of racks: the search runs
// on part of each rack, as NVIDIA's Megatron-Bridge GB200 runs of 128 and 256 GPUs ran on 64 of
// each rack's 72 (16 of 18 trays), rather than refusing the count.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

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

  TEST_CASE("576 GB200 GPUs: 8 whole racks and 64 of each of 9 are both searched, and the faster shown") {
    // 576 = 8 x 72 = 9 x 64: the search runs both placements; its #1 is the faster of the two
    // searches the user could run with --gpus-per-domain 72 and 64.
    const std::string where = "--workload llama3-8b --topology gb200-nvl72 --gpus 576";
    const std::string rest = " --global-batch 1152 --refine 0 --top 1 --json";
    const auto best_of = [&](const std::string& extra) {
      const auto report = nlohmann::json::parse(test::run_stepcast("search " + where + extra + rest));
      return report.at("tables").at(0).at("rows").at(0).at("step_time_s").get<double>();
    };
    const double whole = best_of(" --gpus-per-domain 72");
    const double part = best_of(" --gpus-per-domain 64");
    const auto both = nlohmann::json::parse(test::run_stepcast("search " + where + rest));
    CHECK(both.at("tables").at(0).at("rows").at(0).at("step_time_s").get<double>() ==
          doctest::Approx(std::min(whole, part)));
    std::string note;
    for (const auto& n : both.at("notes")) {
      if (n.get<std::string>().starts_with("placement:")) note = n.get<std::string>();
    }
    CHECK(
        note.starts_with("placement: 576 GPUs fill 8 whole 72-GPU NVLink domains, or 64 of each of 9 in whole "
                         "trays; the search ranked both"));
    CHECK(note.find(fmt::format("{:.3f} s on 8 whole domains", whole)) != std::string::npos);
    CHECK(note.find(fmt::format("{:.3f} s on 64 of each of 9 domains", part)) != std::string::npos);
  }
}

}  // namespace search_placement_test
