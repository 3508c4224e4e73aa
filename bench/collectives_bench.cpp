// Speed of the analytical collective models: one estimate_collective (closed form) or
// price_collective (NCCL's pick) call per iteration. The target is over 1 million evaluations/s
// per core; the planner also remembers prices across plans (graph::PriceCache).
#include <benchmark/benchmark.h>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/topology/topology.hpp"

namespace {

using namespace stepcast;
using namespace stepcast::cost;

// p4d.24xlarge-class nodes (8 GPUs, 300 GB/s NVSwitch, 400 Gbps of NICs), as many as `ranks` fill.
topology::CommTiers p4d_tiers(int ranks) {
  topology::CommTiers t;
  t.ranks = ranks;
  t.ranks_per_node = ranks < 8 ? ranks : 8;
  t.nodes = ranks / t.ranks_per_node;
  t.intra_bw = gbyte_per_s(300);
  t.intra_latency = microseconds(1.7);
  t.node_bw = gbit_per_s(400);
  t.gpu_nic_bw = gbit_per_s(100);
  t.inter_latency = microseconds(14);
  return t;
}

void run(benchmark::State& state, Algorithm algorithm) {
  const topology::CommTiers tiers = p4d_tiers(static_cast<int>(state.range(0)));
  Bytes size = bytes(14e9);
  for (auto _ : state) {
    benchmark::DoNotOptimize(size);
    const CollectiveCost c = estimate_collective(CollectiveOp::kAllReduce, algorithm, size, tiers);
    benchmark::DoNotOptimize(c.time);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_Collectives_RingAllReduce(benchmark::State& state) { run(state, Algorithm::kRing); }
void BM_Collectives_Hierarchical(benchmark::State& state) { run(state, Algorithm::kHierarchical); }
void BM_Collectives_Tree(benchmark::State& state) { run(state, Algorithm::kTree); }

// The --explain path, for comparison: it formats every term, so it allocates.
void BM_Collectives_ExplainRingAllReduce(benchmark::State& state) {
  const topology::CommTiers tiers = p4d_tiers(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    const CollectiveCost c = explain_collective(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(14e9), tiers);
    benchmark::DoNotOptimize(c.explanation.data());
  }
  state.SetItemsProcessed(state.iterations());
}

// The collective model every command prices with (NCCL's pick among its 9 candidates, on the
// group's NCCL system computed once): one price_collective call of a 25 MiB all-reduce on DGX
// H100 nodes, as many as `ranks` fill.
void BM_Collectives_NcclModel(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const topology::Topology topo =
      topology::load_topology(STEPCAST_SOURCE_DIR "/topologies/dgx-h100.json", (ranks + 7) / 8);
  const CollectiveGroup group = collective_group(topo, topo.tiers(ranks));
  Bytes size = bytes(26214400.0);
  for (auto _ : state) {
    benchmark::DoNotOptimize(size);
    const CollectivePrice p = price_collective(group, CollectiveOp::kAllReduce, size, {});
    benchmark::DoNotOptimize(p.time);
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_Collectives_RingAllReduce)->RangeMultiplier(2)->Range(8, 4096);
BENCHMARK(BM_Collectives_NcclModel)->Arg(8)->Arg(1024);
BENCHMARK(BM_Collectives_Hierarchical)->RangeMultiplier(2)->Range(8, 4096);
BENCHMARK(BM_Collectives_Tree)->Arg(8)->Arg(4096);
BENCHMARK(BM_Collectives_ExplainRingAllReduce)->Arg(16);

}  // namespace
