// Speed of MoE predictions and search. Targets (issue 15): predictions per second for an MoE plan
// within 2x of a dense one (BM_Predict_Llama2_70B_64Gpus in predict_bench.cpp, the same machine,
// topology and caching); every plan of DeepSeek-V3 on 1024 H100s (128 DGX H100 nodes) under 2 s.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "stepcast/cost/step.hpp"
#include "stepcast/planner/search.hpp"
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
  cost::StepOptions options;
  options.explain = false;
  cost::StepCommunicationCache cache;
  options.communication_cache = &cache;
  for (auto _ : state) {
    auto prediction = cost::predict_step(w, p, topo, options);
    benchmark::DoNotOptimize(prediction);
  }
  state.SetItemsProcessed(state.iterations());
}

// Mixtral 8x7B on 64 A100s: ep=8 across the data-parallel ranks, experts whole (etp=1).
void BM_Moe_Predict_Mixtral8x7B_64Gpus(benchmark::State& state) {
  run_prediction(state, "mixtral-8x7b.json", "tp=2,pp=4,sp=on,ep=8,etp=1,recompute=selective,flash=on,gbs=512,seq=4096,zero=1");
}

// The dense reference on the same machine and plan shape.
void BM_Moe_Predict_DenseLlama2_70B_64Gpus(benchmark::State& state) {
  run_prediction(state, "llama2-70b.json", "tp=8,pp=4,sp=on,recompute=selective,flash=on,gbs=512");
}

void BM_Moe_Search_DeepSeekV3_1024H100(benchmark::State& state) {
  const workload::Workload w = workload::load_workload(kSource / "workloads/deepseek-v3.json");
  const topology::Topology topo = topology::load_topology(kSource / "topologies/dgx-h100.json", 128);
  planner::SearchSpace space;
  space.gpus = topo.gpu_count();
  space.gpus_per_node = topo.gpus_per_node();
  space.global_batch = 15360;  // DeepSeek-V3's batch of 15360 sequences of 4K tokens (report section 4.2)
  space.seq_len = 4096;
  planner::SearchOptions options;
  options.threads = static_cast<int>(state.range(0));
  std::size_t candidates = 0;
  for (auto _ : state) {
    const planner::SearchResult r = planner::search(w, topo, space, options);
    candidates = r.candidates;
    benchmark::DoNotOptimize(r.ranked.data());
  }
  state.counters["candidates"] = static_cast<double>(candidates);
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(candidates));
}

}  // namespace

BENCHMARK(BM_Moe_Predict_Mixtral8x7B_64Gpus);
BENCHMARK(BM_Moe_Predict_DenseLlama2_70B_64Gpus);
BENCHMARK(BM_Moe_Search_DeepSeekV3_1024H100)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
