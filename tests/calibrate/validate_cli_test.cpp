// `stepcast validate` through the real executable on the public H100 8-GPU nccl-tests log
// (tests/data/nccl-tests/nccl-tests_5coll_H100_1node_8gpu_xxrjun.txt). Its all_reduce_perf row
// for 1073741824 B reads: time 4000.82 us, algbw 268.38 GB/s, busbw 469.67 GB/s (line 28).
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "stepcast/core/input_file.hpp"
#include "support/markup_check.hpp"
#include "support/run_stepcast.hpp"

namespace {

const std::string kLog = "tests/data/nccl-tests/nccl-tests_5coll_H100_1node_8gpu_xxrjun.txt";
const std::string kArgs = "validate --measured " + kLog + " --topology topologies/dgx-h100.json --nodes 1";

}  // namespace

TEST_SUITE("calibrate.validate_cli") {
  TEST_CASE("--json carries each point's measured figures as the log prints them") {
    const auto j = nlohmann::json::parse(stepcast::test::run_stepcast(kArgs + " --json"));
    bool found = false;
    for (const auto& p : j.at("points")) {
      if (p.at("op") != "all-reduce" || p.at("size_bytes").get<double>() != 1073741824.0) continue;
      found = true;
      CHECK(p.at("measured_time_s").get<double>() == doctest::Approx(4000.82e-6));
      CHECK(p.at("measured_busbw_Bps").get<double>() == doctest::Approx(469.67e9));
      CHECK(p.at("where").get<std::string>().find(":28") != std::string::npos);
    }
    CHECK(found);
    CHECK(j.at("median_abs_error_pct").get<double>() > 0.0);
  }

  TEST_CASE("--algorithm auto predicts with the candidate NCCL's tuner picks") {
    const auto j = nlohmann::json::parse(stepcast::test::run_stepcast(kArgs + " --algorithm auto --json"));
    bool found = false;
    for (const auto& p : j.at("points")) {
      if (p.at("op") != "all-reduce" || p.at("size_bytes").get<double>() != 1073741824.0) continue;
      found = true;
      // NVLS/Simple on 8 H100s (NCCL 2.20.3 tuning.cc): latency 23 us; 8 NVLS channels of 40 GB/s
      // times the bus-to-algorithm ratio 5/6 = 266.67 GB/s; 23 us + 1073741824 B / 266.67e9 B/s
      // = 4049.5 us (the derivation is spelled out in tests/cost/nccl_tuning_test.cpp).
      CHECK(p.at("algorithm").get<std::string>() == "nvls/Simple");
      CHECK(p.at("predicted_time_s").get<double>() == doctest::Approx(23e-6 + 1073741824.0 / (8 * 40e9 * 5.0 / 6.0)));
    }
    CHECK(found);
  }

  TEST_CASE("--plot draws measured (solid) and predicted (dashed) bus bandwidth per collective") {
    const std::string svg = (std::filesystem::temp_directory_path() / "stepcast_validate_plot_test.svg").string();
    const std::string out = stepcast::test::run_stepcast(kArgs + " --plot " + svg);
    CHECK(out.find("wrote " + svg) != std::string::npos);
    const std::string text = stepcast::read_text_file(svg);
    std::string why;
    CHECK_MESSAGE(stepcast::test::tags_balanced(text, why), why);
    // The log holds five collectives over 8 ranks: a measured and a predicted line each.
    CHECK(stepcast::test::count_of(text, "<polyline") == 10);
    CHECK(stepcast::test::count_of(text, "stroke-dasharray=\"6 4\"") == 5);
    // 469.67 GB/s at 1 GiB, with four significant digits as the chart labels points.
    CHECK(text.find("<title>all-reduce x8 measured: 469.7 at 1 GiB</title>") != std::string::npos);
    std::filesystem::remove(svg);
  }
}
