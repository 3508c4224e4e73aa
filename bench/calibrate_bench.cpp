// Speed of the calibration path: reading an nccl-tests log (the 80-rank five-collective one) and
// fitting the alpha-beta model to its 50 points.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <string>

#include "stepcast/calibrate/fit.hpp"
#include "stepcast/calibrate/nccl_tests_log.hpp"
#include "stepcast/topology/topology.hpp"

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string kLog =
    std::string(STEPCAST_SOURCE_DIR) + "/tests/data/nccl-tests/nccl-tests_5coll_H100_10nodes_8gpn_80ranks_xxrjun.txt";

void BM_Calibrate_ParseLog(benchmark::State& state) {
  const std::string text = read_text(kLog);
  for (auto _ : state) benchmark::DoNotOptimize(stepcast::calibrate::parse_nccl_tests_log(text, "80ranks.log"));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_Calibrate_ParseLog);

void BM_Calibrate_Fit(benchmark::State& state) {
  const std::vector<stepcast::calibrate::Measurements> m{
      stepcast::calibrate::parse_nccl_tests_log(read_text(kLog), "80ranks.log")};
  const auto topo =
      stepcast::topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/dgx-h100.json", 10);
  const auto samples = stepcast::calibrate::select_samples(m, topo, {}, false);
  for (auto _ : state) benchmark::DoNotOptimize(stepcast::calibrate::fit_samples(samples, "80ranks.log"));
}
BENCHMARK(BM_Calibrate_Fit);

}  // namespace
