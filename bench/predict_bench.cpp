// Speed of one full prediction (step time and memory) of Llama-2 70B on 64 GPUs (8 x p4d):
// the planner's inner loop. Target (issue 3): over 100,000 predictions per second on one core.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "stepcast/graph/predict.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace {

using namespace stepcast;

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

void run_prediction(benchmark::State& state, bool explain, bool cached) {
  const auto topo = topology::load_topology(kSource / "topologies/p4d-24xlarge.json", 8);
  const auto w = workload::load_workload(kSource / "workloads/llama2-70b.json");
  const auto p =
      plan::resolve(plan::parse_plan("tp=8,pp=4,sp=on,recompute=selective,flash=on,gbs=512"), w, topo.gpu_count());
  plan::validate(p, w, topo.gpu_count());
  graph::StepOptions options;
  options.explain = explain;
  // The planner's threads remember collective prices across plans; without, each prediction
  // prices its collectives afresh (predict, simulate).
  graph::PriceCache cache;
  if (cached) options.price_cache = &cache;
  for (auto _ : state) {
    auto prediction = graph::predict_step(w, p, topo, options);
    benchmark::DoNotOptimize(prediction);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Predict_Llama2_70B_64Gpus(benchmark::State& state) { run_prediction(state, false, true); }
void BM_Predict_Llama2_70B_64Gpus_Uncached(benchmark::State& state) { run_prediction(state, false, false); }
void BM_Predict_Llama2_70B_64Gpus_Explained(benchmark::State& state) { run_prediction(state, true, false); }

}  // namespace

BENCHMARK(BM_Predict_Llama2_70B_64Gpus);
BENCHMARK(BM_Predict_Llama2_70B_64Gpus_Uncached);
BENCHMARK(BM_Predict_Llama2_70B_64Gpus_Explained);
