// Speed of writing Chakra execution traces: a synthetic step of 1,024 ranks x 2,000 nodes laid out as
// GPT-3 175B is trained on 1,024 GPUs (tp 8 x pp 8 x dp 16, Narayanan et al. 2021, Table 1):
// compute nodes chained, a tensor-parallel all-reduce after every other one, pipeline sends and
// receives between neighbouring stages, data-parallel all-reduces at the end. Target (issue 27): a
// GPT-3 175B step on 1,024 GPUs written in under 10 s.
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/report/chakra_step.hpp"
#include "stepcast/report/chakra_trace.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace {

using namespace stepcast;
using report::chakra::NodeKind;
using report::chakra::TraceNode;

constexpr int kTp = 8;
constexpr int kPp = 8;
constexpr int kDp = 16;
constexpr int kRanks = kTp * kPp * kDp;
constexpr int kNodesPerRank = 2000;
constexpr int kPipelineMessages = 64;  // sends to the next stage (and receives from the previous)
constexpr int kDpBuckets = 16;         // data-parallel all-reduce buckets
// One micro-batch's activations: 2048 tokens x 12288 hidden x 2 bytes (GPT-3 175B, Brown et al. 2020).
constexpr double kActivationBytes = 2048.0 * 12288.0 * 2.0;
// A bucket of bf16 gradients: 175e9 parameters over tp x pp = 64 ranks, 2 bytes each, in 16 buckets.
constexpr double kBucketBytes = 175e9 / (kTp * kPp) * 2.0 / kDpBuckets;
// The figures only fill the fields; the writer's speed does not depend on them.

// Rank r's nodes, Megatron's rank order: tensor-parallel ranks adjacent, then stages, then replicas.
void build_rank(int r, std::vector<TraceNode>& out) {
  out.clear();
  const int tp_base = r / kTp * kTp;
  const int stage = r / kTp % kPp;
  std::vector<int> tp_group;
  for (int i = 0; i < kTp; ++i) tp_group.push_back(tp_base + i);
  std::vector<int> dp_group;
  for (int d = 0; d < kDp; ++d) dp_group.push_back(r % (kTp * kPp) + d * kTp * kPp);
  std::uint64_t id = 0;
  const auto add = [&](NodeKind kind, std::string name) -> TraceNode& {
    TraceNode& n = out.emplace_back();
    n.id = id++;
    n.name = std::move(name);
    n.kind = kind;
    n.duration = Seconds(120e-6);
    if (n.id > 0) n.data_deps.push_back(n.id - 1);
    return n;
  };
  const int sends = stage + 1 < kPp ? kPipelineMessages : 0;
  const int recvs = stage > 0 ? kPipelineMessages : 0;
  const int rest = kNodesPerRank - sends - recvs - kDpBuckets;
  for (int i = 0; i < rest; ++i) {
    if (i % 2 == 0) {
      TraceNode& c = add(NodeKind::kCompute, "layer block " + std::to_string(i / 2));
      c.flops = 4.0e11;
      c.tensor_bytes = Bytes(150e6);
    } else {
      TraceNode& a = add(NodeKind::kCollective, "tp all-reduce " + std::to_string(i / 2));
      a.bytes = Bytes(kActivationBytes);
      a.group = "tp";
      a.group_ranks = tp_group;
    }
  }
  for (int m = 0; m < recvs; ++m) {
    TraceNode& n = add(NodeKind::kRecv, "activation from stage " + std::to_string(stage - 1));
    n.peer = r - kTp;
    n.tag = static_cast<std::uint32_t>(m);
    n.bytes = Bytes(kActivationBytes);
  }
  for (int m = 0; m < sends; ++m) {
    TraceNode& n = add(NodeKind::kSend, "activation to stage " + std::to_string(stage + 1));
    n.peer = r + kTp;
    n.tag = static_cast<std::uint32_t>(m);
    n.bytes = Bytes(kActivationBytes);
  }
  for (int b = 0; b < kDpBuckets; ++b) {
    TraceNode& n = add(NodeKind::kCollective, "dp all-reduce bucket " + std::to_string(b));
    n.bytes = Bytes(kBucketBytes);
    n.group = "dp";
    n.group_ranks = dp_group;
  }
}

void BM_Chakra_Build_1024Ranks_2000Nodes(benchmark::State& state) {
  std::vector<TraceNode> nodes;
  for (auto _ : state) {
    for (int r = 0; r < kRanks; ++r) {
      build_rank(r, nodes);
      benchmark::DoNotOptimize(nodes.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * kRanks * kNodesPerRank);
}

void BM_Chakra_Write_1024Ranks_2000Nodes(benchmark::State& state) {
  // Named by process: benchmark runs side by side do not meet.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("stepcast-chakra-bench-" + std::to_string(getpid()));
  // Each worker thread its own buffer.
  const auto sources = [] {
    return report::chakra::RankSource(
        [nodes = std::vector<TraceNode>{}](int r) mutable -> const std::vector<TraceNode>& {
          build_rank(r, nodes);
          return nodes;
        });
  };
  std::uintmax_t bytes = 0;
  for (auto _ : state) {
    const auto files = report::chakra::write_chakra(dir, kRanks, sources, "gpt3");
    benchmark::DoNotOptimize(files.traces.data());
  }
  for (int r = 0; r < kRanks; ++r) bytes += std::filesystem::file_size(dir / ("gpt3." + std::to_string(r) + ".et"));
  state.counters["file_MB"] = static_cast<double>(bytes) / 1e6;
  state.SetItemsProcessed(state.iterations() * kRanks * kNodesPerRank);
  std::filesystem::remove_all(dir);
}

// The step graph of GPT-3 175B on 128 DGX A100 nodes (tp=8, pp=8, sp=on, dp=16, sequences of 2048
// tokens) written as `simulate --chakra` writes it: one trace per GPU, every layer's slices, its
// tensor-parallel calls, the pipeline's sends and receives and the gradient buckets. Argument: the
// global batch (128: 8 micro-batches; 1536: 96, Narayanan et al. 2021's batch for it).
void BM_Chakra_Gpt3StepGraph_1024Gpus(benchmark::State& state) {
  const std::filesystem::path root = STEPCAST_SOURCE_DIR;
  const workload::Workload w = workload::load_workload(root / "workloads/gpt3-175b.json");
  const topology::Topology t = topology::load_topology(root / "topologies/dgx-a100.json", 128);
  plan::Plan plan = plan::parse_plan("tp=8,pp=8,mbs=1,sp=on");
  plan.global_batch = static_cast<int>(state.range(0));
  plan.seq_len = 2048;
  plan = plan::resolve(plan, w, 1024);
  plan::validate(plan, w, 1024);
  graph::StepOptions options;
  options.explain = false;
  const graph::StepGraph g = graph::plan_step_graph(w, plan, t, options);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("stepcast-chakra-gpt3-" + std::to_string(getpid()));
  for (auto _ : state) benchmark::DoNotOptimize(report::write_step_chakra(dir, g, t, {}).traces.size());
  std::uintmax_t bytes = 0;
  for (int r = 0; r < 1024; ++r) bytes += std::filesystem::file_size(dir / ("stepcast." + std::to_string(r) + ".et"));
  state.counters["file_MB"] = static_cast<double>(bytes) / 1e6;
  std::filesystem::remove_all(dir);
}

}  // namespace

BENCHMARK(BM_Chakra_Build_1024Ranks_2000Nodes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Chakra_Write_1024Ranks_2000Nodes)->Unit(benchmark::kMillisecond);
// The full batch writes 1.7 GB: only when asked (STEPCAST_BENCH_FULL set), so CI's smoke pass
// stays light.
BENCHMARK(BM_Chakra_Gpt3StepGraph_1024Gpus)->Arg(128)->Unit(benchmark::kMillisecond)->Iterations(1);
const bool kFullBatch = std::getenv("STEPCAST_BENCH_FULL") != nullptr &&
                        benchmark::RegisterBenchmark("BM_Chakra_Gpt3StepGraph_1024Gpus",
                                                     [](benchmark::State& s) { BM_Chakra_Gpt3StepGraph_1024Gpus(s); })
                            ->Arg(1536)
                            ->Unit(benchmark::kMillisecond)
                            ->Iterations(1);
