// `stepcast table` and `stepcast search` through the real executable: every table format parses
// with an independent reader, and the thread count never changes a byte of the output.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/markup_check.hpp"
#include "support/run_stepcast.hpp"

namespace table_cli_test {

namespace {

const std::string kTable =
    "table --workloads workloads/llama2-7b.json,workloads/llama2-13b.json --topologies topologies/p4d-24xlarge.json "
    "--gpus 8,16 --global-batch 64 --seq 4096 --tokens 1e12 --price-per-gpu-hour 4.10";

}  // namespace

TEST_SUITE("report.table_cli") {
  TEST_CASE("table CSV: a header and one record per cell (2 workloads x 2 GPU counts), same width") {
    bool ok = false;
    const auto records = stepcast::test::parse_csv(stepcast::test::run_stepcast(kTable + " --format csv"), ok);
    REQUIRE(ok);
    REQUIRE(records.size() == 1 + 4);
    for (const auto& r : records) CHECK(r.size() == records[0].size());
    CHECK(records[0][0] == "workload");
    CHECK(records[1][0] == "llama2-7b");
    CHECK(records[4][0] == "llama2-13b");
  }

  TEST_CASE("table JSON: parses, four rows, GPU-hours = days x 24 x GPUs") {
    const auto doc = nlohmann::json::parse(stepcast::test::run_stepcast(kTable + " --format json"));
    const auto& rows = doc["tables"][0]["rows"];
    REQUIRE(rows.size() == 4);
    for (const auto& row : rows) {
      if (!row["fits"].get<bool>()) continue;
      // GPU-hours = hours x GPUs = days x 24 x GPUs; cost = GPU-hours x 4.10.
      CHECK(row["gpu_hours"].get<double>() ==
            doctest::Approx(row["train_days"].get<double>() * 24.0 * row["gpus"].get<double>()).epsilon(1e-6));
      CHECK(row["cost_usd"].get<double>() == doctest::Approx(row["gpu_hours"].get<double>() * 4.10).epsilon(1e-6));
    }
  }

  TEST_CASE("table JSON: each fitting cell's 90% interval is the one predict gives its plan") {
    const auto doc = nlohmann::json::parse(stepcast::test::run_stepcast(kTable + " --format json"));
    int checked = 0;
    for (const auto& row : doc["tables"][0]["rows"]) {
      if (!row["fits"].get<bool>()) {
        CHECK(row["interval_low_s"].is_null());
        continue;
      }
      const std::string workload = row["workload"].get<std::string>() == "llama2-7b" ? "llama2-7b" : "llama2-13b";
      const auto predicted = nlohmann::json::parse(stepcast::test::run_stepcast(
          "predict --workload workloads/" + workload + ".json --topology topologies/p4d-24xlarge.json --gpus " +
          std::to_string(row["gpus"].get<int>()) + " --plan \"" + row["plan"].get<std::string>() +
          ",gbs=64,seq=4096\" --json"));
      const auto& interval = predicted["step_time_interval_s"];
      REQUIRE(interval.is_object());
      CHECK(row["step_time_s"].get<double>() == doctest::Approx(predicted["step_time_s"].get<double>()));
      CHECK(row["interval_low_s"].get<double>() == doctest::Approx(interval["low_s"].get<double>()));
      CHECK(row["interval_high_s"].get<double>() == doctest::Approx(interval["high_s"].get<double>()));
      CHECK(row["interval_low_s"].get<double>() < row["interval_high_s"].get<double>());
      ++checked;
    }
    CHECK(checked >= 2);
  }

  TEST_CASE("table Markdown: header, rule and four rows with the same number of cells") {
    const std::string md = stepcast::test::run_stepcast(kTable + " --format markdown");
    std::size_t rows = 0;
    std::size_t pipes_first = 0;
    std::size_t start = 0;
    while (start < md.size()) {
      const std::size_t end = md.find('\n', start);
      const std::string line = md.substr(start, end - start);
      start = end + 1;
      if (line.empty() || line[0] != '|') continue;
      std::size_t pipes = 0;
      for (std::size_t i = 0; i < line.size(); ++i) pipes += line[i] == '|' && (i == 0 || line[i - 1] != '\\');
      if (rows == 0) pipes_first = pipes;
      CHECK(pipes == pipes_first);
      ++rows;
    }
    CHECK(rows == 2 + 4);
  }

  TEST_CASE("table HTML: well-formed, four charts, four <svg> elements") {
    const std::string html = stepcast::test::run_stepcast(kTable + " --format html");
    std::string why;
    CHECK_MESSAGE(stepcast::test::tags_balanced(html, why), why);
    CHECK(stepcast::test::count_of(html, "<svg ") == 4);
    CHECK(stepcast::test::count_of(html, "<script") == 0);
  }

  TEST_CASE("table HTML: the table before the charts, past 8 lines, one small chart per cluster and 8 workloads") {
    // Nine workloads on one cluster: 9 lines split into charts of 8 and 1, for throughput and
    // for MFU, then the two bar charts: 6 <svg> elements, all after the table.
    const std::string nine =
        "workloads/llama2-7b.json,workloads/llama2-13b.json,workloads/llama3-8b.json,workloads/mpt-125m.json,"
        "workloads/mpt-350m.json,workloads/mpt-760m.json,workloads/mpt-1b.json,workloads/mpt-3b.json,"
        "workloads/mpt-7b.json";
    const std::string html =
        stepcast::test::run_stepcast("table --workloads " + nine +
                                     " --topologies topologies/p4d-24xlarge.json --gpus 8 --global-batch 64 "
                                     "--seq 2048 --flash --format html");
    CHECK(stepcast::test::count_of(html, "<svg ") == 6);
    CHECK(html.find("Throughput against GPU count on p4d.24xlarge (1 of 2)") != std::string::npos);
    CHECK(html.find("MFU against GPU count on p4d.24xlarge (2 of 2)") != std::string::npos);
    CHECK(html.find("<table>") < html.find("<svg "));
  }

  TEST_CASE("search and table print the same bytes with 1 and 2 threads") {
    const std::string search =
        "search --workload workloads/llama2-13b.json --topology topologies/p4d-24xlarge.json --nodes 2 "
        "--global-batch 64 --seq 4096 --top 20 --format csv";
    CHECK(stepcast::test::run_stepcast(search + " --threads 1") ==
          stepcast::test::run_stepcast(search + " --threads 2"));
    CHECK(stepcast::test::run_stepcast(kTable + " --format json --threads 1") ==
          stepcast::test::run_stepcast(kTable + " --format json --threads 2"));
  }
}

}  // namespace table_cli_test
