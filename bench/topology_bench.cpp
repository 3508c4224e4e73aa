// Speed of the topology layer: loading and expanding a cluster file (up to 1024 nodes of 8 GPUs),
// tiers() as plan search calls it, and route() as the discrete-event engine calls it.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <utility>
#include <vector>

#include "stepcast/topology/topology.hpp"

namespace {

using stepcast::topology::load_topology;
using stepcast::topology::Topology;

std::filesystem::path p4d() { return std::filesystem::path(STEPCAST_SOURCE_DIR) / "topologies" / "p4d-24xlarge.json"; }

// Parse, expand, validate and precompute: what every command pays once per topology.
void BM_Topology_LoadCluster(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  for (auto _ : state) {
    Topology t = load_topology(p4d(), nodes);
    benchmark::DoNotOptimize(t.gpu_count());
  }
  state.counters["gpus"] = nodes * 8.0;
}
BENCHMARK(BM_Topology_LoadCluster)->RangeMultiplier(4)->Range(1, 1024)->Unit(benchmark::kMillisecond);

// One tiers() call for a group of all GPUs (stride 1) or one GPU per node (stride 8).
void BM_Topology_Tiers(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int stride = static_cast<int>(state.range(1));
  const Topology t = load_topology(p4d(), nodes);
  const int ranks = (t.gpu_count() - 1) / stride + 1;
  for (auto _ : state) benchmark::DoNotOptimize(t.tiers(ranks, stride));
  state.counters["ranks"] = ranks;
}
BENCHMARK(BM_Topology_Tiers)->ArgsProduct({{2, 64, 1024}, {1, 8}})->Unit(benchmark::kMicrosecond);

// route() between GPU pairs drawn with a seeded generator (fixed pairs, so runs compare).
void BM_Topology_Route(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const Topology t = load_topology(p4d(), nodes);
  std::mt19937_64 rng(42);
  std::vector<std::pair<int, int>> pairs;
  const auto n = static_cast<std::uint64_t>(t.gpu_count());
  for (int i = 0; i < 1024; ++i) pairs.emplace_back(static_cast<int>(rng() % n), static_cast<int>(rng() % n));
  std::size_t i = 0;
  for (auto _ : state) {
    const auto& [src, dst] = pairs[i++ % pairs.size()];
    benchmark::DoNotOptimize(t.route(src, dst));
  }
}
BENCHMARK(BM_Topology_Route)->Arg(2)->Arg(16)->Arg(128)->Arg(1024)->Unit(benchmark::kMicrosecond);

}  // namespace
