// Speed of plan search: every plan of GPT-3 175B on 1024 A100s (128 p4d nodes), analytical model,
// all cores. Target (issue 6): under 1 second on the 2-core development machine.
#include <benchmark/benchmark.h>

#include <filesystem>

#include "stepcast/planner/search.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace {

using namespace stepcast;

void BM_Search_Gpt3_175b_1024Gpus(benchmark::State& state) {
  const std::filesystem::path root(STEPCAST_SOURCE_DIR);
  const workload::Workload w = workload::load_workload(root / "workloads/gpt3-175b.json");
  const topology::Topology topo = topology::load_topology(root / "topologies/p4d-24xlarge.json", 128);
  planner::SearchSpace space;
  space.gpus = topo.gpu_count();
  space.gpus_per_node = topo.gpus_per_node();
  space.global_batch = 1536;  // GPT-3's batch of 3.2M tokens (Brown et al. 2020, Table 2.1) / 2048
  space.seq_len = 2048;
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

BENCHMARK(BM_Search_Gpt3_175b_1024Gpus)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
