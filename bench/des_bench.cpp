// Discrete-event engine benchmarks: raw event throughput, the 1024-rank ring all-reduce over one
// flat switch, and one GPT-3 175B step (tp=8, pp=8) on 1024 and 16,384 GPUs.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "stepcast/cost/collectives.hpp"
#include "stepcast/des/event_queue.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/sim/collective_flows.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

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

// One GPT-3 175B step on DGX A100 nodes, tp=8, pp=8, dp from the GPU count, 2048-token sequences:
// the plan's step graph as `stepcast simulate` builds it: the compute model's per-layer times, 12
// layers per stage, two TP all-reduces per layer and pass as flows, PP sends, DDP buckets.
struct Gpt3Step {
  topology::Topology topology;
  graph::StepGraph graph;
  int micro_batches = 0;
};

Gpt3Step gpt3_step(int gpus, int global_batch) {
  const std::filesystem::path root = STEPCAST_SOURCE_DIR;
  const workload::Workload w = workload::load_workload(root / "workloads/gpt3-175b.json");
  topology::Topology t = topology::load_topology(root / "topologies/dgx-a100.json", gpus / 8);
  plan::Plan plan = plan::parse_plan("tp=8,pp=8,mbs=1");
  plan.global_batch = global_batch;
  plan.seq_len = 2048;
  plan = plan::resolve(plan, w, gpus);
  plan::validate(plan, w, gpus);
  graph::StepOptions options;
  options.explain = false;
  graph::StepGraph g = graph::plan_step_graph(w, plan, t, options);
  return Gpt3Step{std::move(t), std::move(g), plan.micro_batches()};
}

void run_gpt3_step(benchmark::State& state, const sim::Perturbation& perturbation) {
  const Gpt3Step g = gpt3_step(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  std::uint64_t events = 0;
  for (auto _ : state) {
    sim::SimOptions options;
    options.perturbation = perturbation;
    const sim::StepResult r = sim::simulate_step(g.topology, g.graph, options);
    events = r.events;
    benchmark::DoNotOptimize(r.step_time);
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["micro_batches"] = g.micro_batches;
}

// Arguments: GPUs, global batch. 1024 GPUs: dp = 16, 1536 sequences = 96 micro-batches;
// 16,384 GPUs: dp = 256, 8192 sequences = 32 micro-batches.
void BM_Des_Gpt3Step(benchmark::State& state) { run_gpt3_step(state, {}); }
BENCHMARK(BM_Des_Gpt3Step)->Args({1024, 1536})->Args({16384, 8192})->Unit(benchmark::kMillisecond)->Iterations(1);

// The same step with per-GPU step noise (--straggler step-cv=0.05): every data-parallel replica
// is simulated (pp x dp ranks), plus the calm run that measures the wait on stragglers.
void BM_Des_Gpt3StepStragglers(benchmark::State& state) {
  sim::Perturbation p;
  p.step_cv = 0.05;
  run_gpt3_step(state, p);
}
BENCHMARK(BM_Des_Gpt3StepStragglers)->Args({1024, 1536})->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
