// Speed of MoE predictions. Target (issue 15): predictions per second for an MoE plan within 2x
// of a dense one on the same machine, topology and caching (DeepSeek-V3's search is in
// search_bench.cpp).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "stepcast/graph/predict.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace {

using namespace stepcast;

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

void run_prediction(benchmark::State& state, const char* workload_file, const char* plan_text) {
  const auto topo = topology::load_topology(kSource / "topologies/p4d-24xlarge.json", 8);
  const auto w = workload::load_workload(kSource / "workloads" / workload_file);
  const auto p = plan::resolve(plan::parse_plan(plan_text), w, topo.gpu_count());
  plan::validate(p, w, topo.gpu_count());
  graph::StepOptions options;
  options.explain = false;
  graph::PriceCache cache;
  options.price_cache = &cache;
  for (auto _ : state) {
    auto prediction = graph::predict_step(w, p, topo, options);
    benchmark::DoNotOptimize(prediction);
  }
  state.SetItemsProcessed(state.iterations());
}

// Mixtral 8x7B on 64 A100s: ep=8 across the data-parallel ranks, experts whole (etp=1).
void BM_Moe_Predict_Mixtral8x7B_64Gpus(benchmark::State& state) {
  run_prediction(state, "mixtral-8x7b.json",
                 "tp=2,pp=4,sp=on,ep=8,etp=1,recompute=selective,flash=on,gbs=512,seq=4096,zero=1");
}

// The dense reference on the same machine and plan shape.
void BM_Moe_Predict_DenseLlama2_70B_64Gpus(benchmark::State& state) {
  run_prediction(state, "llama2-70b.json", "tp=8,pp=4,sp=on,recompute=selective,flash=on,gbs=512");
}

}  // namespace

BENCHMARK(BM_Moe_Predict_Mixtral8x7B_64Gpus);
BENCHMARK(BM_Moe_Predict_DenseLlama2_70B_64Gpus);
