// Discrete-event engine benchmarks: raw event throughput, the 1024-rank ring all-reduce over one
// flat switch, and one GPT-3 175B-shaped step (tp=8, pp=8) on 1024 and 16,384 GPUs.
#include <benchmark/benchmark.h>

#include <numeric>
#include <string>
#include <vector>

#include "stepcast/cost/collectives.hpp"
#include "stepcast/des/event_queue.hpp"
#include "stepcast/sim/collective_flows.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"

using namespace stepcast;

namespace {

topology::Topology flat(int n, BytesPerSecond bw) {
  std::vector<topology::Vertex> v;
  std::vector<topology::Link> l;
  for (int i = 0; i < n; ++i) {
    v.push_back({"gpu" + std::to_string(i), topology::VertexKind::kGpu, i});
    l.push_back({static_cast<topology::VertexId>(i), static_cast<topology::VertexId>(n), bw, microseconds(1),
                 topology::LinkTier::kNic});
  }
  v.push_back({"switch", topology::VertexKind::kSwitch, -1});
  return topology::Topology("flat", "benchmark graph", topology::GpuSpec{}, v, l, 1.0);
}

// Hold-model throughput: a queue of 4096 pending events; pop one, schedule one later.
void BM_Des_EventThroughput(benchmark::State& state) {
  des::EventQueue q;
  q.reserve(8192);
  std::uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 4096; ++i) q.schedule(static_cast<des::Tick>(i), static_cast<std::uint64_t>(i));
  for (auto _ : state) {
    const des::Event e = q.pop();
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    q.schedule(e.tick + 1 + static_cast<des::Tick>(x & 0xFFFF), e.payload);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Des_EventThroughput);

// 14e9 B ring all-reduce over 1024 ranks, one flat switch, 50 GB/s links.
void BM_Des_Ring1024(benchmark::State& state) {
  const topology::Topology t = flat(1024, gbyte_per_s(50));
  std::vector<int> ranks(1024);
  std::iota(ranks.begin(), ranks.end(), 0);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        sim::simulate_collective(t, cost::CollectiveOp::kAllReduce, cost::Algorithm::kRing, bytes(14e9), ranks));
  }
}
BENCHMARK(BM_Des_Ring1024)->Unit(benchmark::kMillisecond);

// A GPT-3 175B-shaped step: tp=8, pp=8, dp from the GPU count, 1536 sequences, DDP in 25 MiB
// buckets of the stage's fp16 gradients (175e9 / 64 x 2 B), compute figures of the order the
// predictor gives on A100s (the engine's cost is what is measured, not the figures).
void BM_Des_Gpt3Step(benchmark::State& state) {
  const auto gpus = static_cast<int>(state.range(0));
  const topology::Topology t =
      topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/dgx-a100.json", gpus / 8);
  sim::StepSpec s;
  s.tp = 8;
  s.pp = 8;
  s.dp = gpus / 64;
  s.micro_batches = 1536 / s.dp;
  s.forward = seconds(0.05);
  s.backward = seconds(0.1);
  s.p2p_bytes = bytes(2048.0 * 12288 * 2 / 8);
  s.stride_pp = 8;
  s.stride_dp = 64;
  const double grads = 175e9 / 64 * 2;
  const double bucket = 25.0 * 1048576.0;
  s.syncs.push_back(sim::GradientSync{"DDP", cost::CollectiveOp::kAllReduce, bytes(bucket), grads / bucket});
  std::uint64_t events = 0;
  for (auto _ : state) {
    const sim::StepResult r = sim::simulate_step(t, s);
    events = r.events;
    benchmark::DoNotOptimize(r.step_time);
  }
  state.counters["events"] = static_cast<double>(events);
}
BENCHMARK(BM_Des_Gpt3Step)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
