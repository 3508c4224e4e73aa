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

namespace validate_cli_test {

namespace {

const std::string kLog = "tests/data/nccl-tests/nccl-tests_5coll_H100_1node_8gpu_xxrjun.txt";
const std::string kArgs = "validate --measured " + kLog + " --topology topologies/dgx-h100.json --nodes 1";

const std::string kCut = "tests/data/nccl-tests/forms/rows_truncated_mid_line.log";
const std::string kTagged = "tests/data/nccl-tests/forms/mpirun_tag_output.log";

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
      // NVLS/Simple on 8 H100s (NCCL 2.29's src/tuning/nvls.cc): latency 25 us; 8 NVLS channels of
      // min(40 x 0.85 x 7/8 x 2, bwInter 60) = 59.5 GB/s = 476 bus, x 8/14 = 272 GB/s; 25 us +
      // 1073741824 B / 272e9 B/s = 3972.6 us (the derivation is spelled out in
      // tests/cost/nccl_tuning_test.cpp; the log measured 4000.8 us).
      CHECK(p.at("algorithm").get<std::string>() == "nvls/Simple");
      CHECK(p.at("predicted_time_s").get<double>() == doctest::Approx(25e-6 + 1073741824.0 / 272e9));
    }
    CHECK(found);
  }

  TEST_CASE("validate says per file how many rows it read, skipped (why) and used, --verbose lists the lines") {
    // The log (see its first lines): rows on lines 37 and 40; lines 38, 39 and 41 a broken row, its
    // rest and a row cut off; 42-43 NCCL's WARN and INFO; no summary after line 40.
    const std::string args = "validate --measured " + kCut + " --topology topologies/dgx-h100.json";
    const std::string out = stepcast::test::run_stepcast(args);
    CHECK(out.find("read " + kCut +
                   ": 2 rows in 1 run; skipped 5 lines (unreadable or cut-off rows: 3, NCCL debug "
                   "output: 2); used 2 rows\n") != std::string::npos);
    CHECK(out.find("  note: " + kCut + ":40: the run that starts at line 4 has no \"# Avg bus bandwidth\" line") !=
          std::string::npos);
    CHECK(out.find("skipped: ") == std::string::npos);
    const std::string verbose = stepcast::test::run_stepcast(args + " --verbose");
    CHECK(verbose.find("  skipped: " + kCut +
                       ":41: a result row cut off after 9 of its 13 columns (size count type "
                       "redop root time algbw busbw #wrong time algbw busbw #wrong)\n") != std::string::npos);
    CHECK(stepcast::test::count_of(verbose, "  skipped: ") == 5);
    // --min-size 16MiB leaves out the 4194240 B row (line 37) and keeps the 67108800 B one (line 40).
    const std::string min_size = stepcast::test::run_stepcast(args + " --min-size 16MiB");
    CHECK(min_size.find("; used 1 row (not used: outside --min-size/--max-size: 1)\n") != std::string::npos);
    const auto j = nlohmann::json::parse(stepcast::test::run_stepcast(args + " --json"));
    const auto& file = j.at("measured_files").at(0);
    CHECK(file.at("rows_read") == 2);
    CHECK(file.at("rows_used") == 2);
    CHECK(file.at("lines_skipped").at("unreadable or cut-off rows") == 3);
    CHECK(file.at("lines_skipped").at("NCCL debug output") == 2);
    CHECK(file.at("notes").at(0).at("line") == 40);
  }

  TEST_CASE("calibrate prints the same summary, --op reads a tagged log that names no program") {
    const std::string cal = (std::filesystem::temp_directory_path() / "stepcast_forms_calibration.json").string();
    const std::string args = "calibrate --measured " + kTagged + " --topology topologies/alcf-polaris.json -o " + cal;
    // mpirun --tag-output log: 8 rows (lines 22-25, 28-31) and 5 NCCL INFO lines, all_reduce_perf named nowhere.
    const auto refused = stepcast::test::run_stepcast_with_status(args);
    CHECK(refused.exit_code == 2);
    CHECK(refused.output.find(kTagged + ":5: cannot tell which collective this run measured") != std::string::npos);
    const std::string out = stepcast::test::run_stepcast(args + " --op all-reduce --holdout every-other");
    // every-other holds out the odd-indexed sizes: 4 of the 8 rows are fitted.
    CHECK(out.find("read " + kTagged +
                   ": 8 rows in 1 run; skipped 5 lines (NCCL debug output: 5); used 4 rows (not "
                   "used: held out by --holdout: 4)\n") != std::string::npos);
    std::filesystem::remove(cal);
  }

  TEST_CASE("calibrate names the ranks and nodes the log measured, not the topology file's default node count") {
    // The log's header: 8 ranks, all on host cnode3-002; dgx-h100.json defaults to 4 nodes (32 GPUs).
    const std::string cal = (std::filesystem::temp_directory_path() / "stepcast_one_node_calibration.json").string();
    const std::string out =
        stepcast::test::run_stepcast("calibrate --measured " + kLog + " --topology topologies/dgx-h100.json -o " + cal);
    CHECK(out.find("fitted 50 points on dgx-h100 (8 ranks on 1 node)\n") != std::string::npos);
    std::filesystem::remove(cal);
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

}  // namespace validate_cli_test
