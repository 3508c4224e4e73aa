// Speed of plan search: every plan of GPT-3 175B on 1024 A100s (128 p4d nodes), analytical model,
// all cores. Target (issue 6): under 1 second on the 2-core development machine. And every plan
// of DeepSeek-V3 on 1024 H100s (issue 15): under 2 s. And what a search budget reads first (issue
// 32): the candidates counted, against the same candidates built.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <filesystem>
#include <vector>

#include "stepcast/planner/candidates.hpp"
#include "stepcast/planner/search.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace {

using namespace stepcast;

const std::filesystem::path kRoot(STEPCAST_SOURCE_DIR);

// The search space of every plan on the topology's GPUs.
planner::SearchSpace space_on(const topology::Topology& topo, int global_batch, int seq) {
  planner::SearchSpace space;
  space.gpus = topo.gpu_count();
  space.gpus_per_node = topo.gpus_per_node();
  space.global_batch = global_batch;
  space.seq_len = seq;
  return space;
}

// Every plan of `workload` on `nodes` nodes of `topology_file`, on state.range(0) threads.
void run_search(benchmark::State& state, const char* workload_file, const char* topology_file, int nodes,
                int global_batch, int seq) {
  const workload::Workload w = workload::load_workload(kRoot / "workloads" / workload_file);
  const topology::Topology topo = topology::load_topology(kRoot / "topologies" / topology_file, nodes);
  const planner::SearchSpace space = space_on(topo, global_batch, seq);
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

// GPT-3's batch of 3.2M tokens (Brown et al. 2020, Table 2.1) in sequences of 2048.
void BM_Search_Gpt3_175b_1024Gpus(benchmark::State& state) {
  run_search(state, "gpt3-175b.json", "p4d-24xlarge.json", 128, 1536, 2048);
}

// Every MoE plan (ep, etp too) of DeepSeek-V3 on 1024 H100s; target (issue 15): under 2 s.
// DeepSeek-V3's batch of 15360 sequences of 4K tokens (report section 4.2).
void BM_Moe_Search_DeepSeekV3_1024H100(benchmark::State& state) {
  run_search(state, "deepseek-v3.json", "dgx-h100.json", 128, 15360, 4096);
}

// The DeepSeek-V3 search space on 1024 H100s above (the search prices each candidate too).
planner::SearchSpace deepseek_space() {
  return space_on(topology::load_topology(kRoot / "topologies/dgx-h100.json", 128), 15360, 4096);
}

workload::Workload deepseek_v3() { return workload::load_workload(kRoot / "workloads/deepseek-v3.json"); }

void BM_Candidates_Count_DeepSeekV3_1024H100(benchmark::State& state) {
  const workload::Workload w = deepseek_v3();
  const planner::SearchSpace space = deepseek_space();
  std::size_t n = 0;
  for (auto _ : state) benchmark::DoNotOptimize(n = planner::count_candidates(space, w));
  state.counters["candidates"] = static_cast<double>(n);
}

void BM_Candidates_Build_DeepSeekV3_1024H100(benchmark::State& state) {
  const workload::Workload w = deepseek_v3();
  const planner::SearchSpace space = deepseek_space();
  std::size_t n = 0;
  for (auto _ : state) {
    const std::vector<plan::Plan> all = planner::enumerate_candidates(space, w);
    n = all.size();
    benchmark::DoNotOptimize(all.data());
  }
  state.counters["candidates"] = static_cast<double>(n);
}

}  // namespace

BENCHMARK(BM_Candidates_Count_DeepSeekV3_1024H100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Candidates_Build_DeepSeekV3_1024H100)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Search_Gpt3_175b_1024Gpus)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Moe_Search_DeepSeekV3_1024H100)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
