// Speed of `validate --runs` on 10,000 measured runs: reading and checking the file, predicting
// every run with the analytical model and summarising, then the text report. Target (issue 14):
// under 2 s. The runs are the shipped datasets' rows repeated to 10,000.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/calibrate/training_runs.hpp"
#include "stepcast/report/run_reports.hpp"

namespace {

using namespace stepcast;

constexpr std::size_t kRuns = 10000;

/// The dataset's header and comments, then its data rows repeated until there are kRuns.
std::filesystem::path ten_thousand_runs(const std::string& dataset) {
  std::ifstream in(std::string(STEPCAST_SOURCE_DIR) + "/tests/data/runs/" + dataset);
  std::string out;
  std::vector<std::string> rows;
  bool header = false;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("#") || !header) {
      header = header || !line.starts_with("#");
      out += line + "\n";
    } else {
      rows.push_back(line);
    }
  }
  // Each copy under its own run id (the first column): a runs file names each run once.
  for (std::size_t i = 0; i < kRuns; ++i) {
    const std::string& row = rows[i % rows.size()];
    const std::size_t comma = row.find(',');
    out += row.substr(0, comma) + "/" + std::to_string(i / rows.size()) + row.substr(comma) + "\n";
  }
  const auto path =
      std::filesystem::temp_directory_path() / ("stepcast_runs_bench_" + std::to_string(::getpid()) + "_" + dataset);
  std::ofstream(path) << out;
  return path;
}

void validate(benchmark::State& state, const std::string& dataset) {
  const std::filesystem::path file = ten_thousand_runs(dataset);
  for (auto _ : state) {
    const auto runs = calibrate::read_training_runs({file}, STEPCAST_SOURCE_DIR);
    const auto result = calibrate::validate_runs(
        runs, [](const calibrate::TrainingRun& run) { return calibrate::predict_analytically(run, nullptr); });
    benchmark::DoNotOptimize(report::run_validation_text(runs, result, {{file.string()}, "analytical", {}}));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kRuns));
  std::filesystem::remove(file);
}

void BM_Runs_Validate10k_VtrainRows(benchmark::State& state) { validate(state, "vtrain_single_node_a100.csv"); }
void BM_Runs_Validate10k_LlmFoundryRows(benchmark::State& state) { validate(state, "llm_foundry_mpt.csv"); }

}  // namespace

BENCHMARK(BM_Runs_Validate10k_VtrainRows)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Runs_Validate10k_LlmFoundryRows)->Unit(benchmark::kMillisecond);
