// Work estimates from counts, with rates measured with /usr/bin/time on the 2-core build machine
// (stepcast 0.1.0, release build): see each constant. Every rate is the slower of the runs it
// comes from, so the estimates lean high.
#include "stepcast/planner/work_estimate.hpp"

#include <algorithm>

namespace stepcast::planner {
namespace {

// A process that has read its inputs: the executable, a topology of a few nodes, the catalogues.
constexpr Bytes kBaseMemory = Bytes(64.0 * 1024 * 1024);

// Simulation: pp=8 Llama-2 7B, 4096 micro-batches (65,536 compute tasks) took 0.37 s and 6 MB more
// than 256 micro-batches: 5.6 us and 92 B per task (rounded up to 6 us, 200 B).
constexpr Seconds kPerTask = Seconds(6e-6);
constexpr Bytes kPerTaskMemory = Bytes(200.0);
// Per-layer collectives, per rank they span: tp=2 Llama-2 7B over 32,768 micro-batches (8.4e6
// rank-collectives) took 3.7 s more than its tasks alone, 0.44 us each; ZeRO-3 over 8 ranks, 2,048
// micro-batches (1.6e6) 1.9 s and 72 MB, 1.2 us and 46 B each.
constexpr Seconds kPerRankCollective = Seconds(1.2e-6);
constexpr Bytes kPerRankCollectiveMemory = Bytes(50.0);
// A trace keeps one span per task and collective, then writes about 150 B of JSON for each.
constexpr Bytes kPerSpan = Bytes(300.0);

// Analytical search, one thread, `/usr/bin/time` user + sys over the candidates (2026-12-02, load
// ~5; bench/RESULTS.md): searches of 74,778 to 790,338 candidates (Llama 3.1 405B, GPT-3, DeepSeek-V3,
// Llama 3 8B and 70B, MPT-125M) took 6.2 to 12.5 us each, more where more candidates fit and are
// priced: 13 us, the slowest rounded up. (Small searches of mostly fitting plans ran at 18-25 us;
// they fit in memory budgets far below the time budget: 4 GiB is 2.8 M candidates, 70 s at 25 us.)
// Memory grows by 0.66 KB per candidate where few fit, up to 1.31 KB where 58% fit (the ranked
// plans are kept): 1.5 KB.
constexpr Seconds kPerCandidate = Seconds(13e-6);
constexpr Bytes kPerCandidateMemory = Bytes(1500.0);

// A collective on the event engine grows with the square of its ranks: an all-reduce of 1 GiB over
// 8,192 and 65,536 H100s took 0.9 and 75 s, 1.3e-8 and 1.7e-8 s per rank squared, and 1.4 KB a rank.
constexpr double kPerRankSquaredSeconds = 2e-8;
constexpr Bytes kPerRankMemory = Bytes(1500.0);

}  // namespace

WorkEstimate& WorkEstimate::operator+=(const WorkEstimate& other) {
  time = time + other.time;
  // One process: its base counted once.
  memory = memory.value() > 0.0 ? memory + other.memory - kBaseMemory : other.memory;
  return *this;
}

WorkEstimate& WorkEstimate::then(const WorkEstimate& other) {
  time = time + other.time;
  memory = std::max(memory, other.memory);
  return *this;
}

WorkEstimate simulation_work(const workload::Workload& workload, const plan::Plan& p, bool every_replica, bool trace) {
  const double ranks = static_cast<double>(p.pp) * (every_replica ? p.dp : 1);
  const double passes = p.schedule == plan::Schedule::kZbH1 ? 3.0 : 2.0;
  const double tasks = ranks * p.micro_batches() * p.vp * passes;
  const auto& shape = workload.shape;
  const double layers_per_task = shape ? static_cast<double>(shape->layers) / (p.pp * p.vp) : 1.0;
  // Collectives inside each layer of a task, times the ranks each spans: tensor parallel's after
  // attention and after the MLP (two with sequence parallel), context parallel's exchange, an MoE
  // block's dispatch and combine, and FSDP / ZeRO-3's gather and reduce-scatter per layer.
  double per_layer = 0.0;
  if (p.tp > 1) per_layer += 2.0 * (p.sequence_parallel ? 2.0 : 1.0) * p.tp;
  if (p.cp > 1) per_layer += 2.0 * p.cp;
  if (shape && shape->moe) per_layer += 4.0 * std::max(p.ep, 2);
  if (p.zero_stage() == 3) per_layer += 1.5 * std::max(p.state_shards(), 2);
  const double rank_collectives = tasks * layers_per_task * per_layer;
  WorkEstimate w;
  w.time = kPerTask * tasks + kPerRankCollective * rank_collectives;
  w.memory = kBaseMemory + kPerTaskMemory * tasks + kPerRankCollectiveMemory * rank_collectives;
  if (trace) w.memory = w.memory + kPerSpan * (tasks + tasks * layers_per_task * (per_layer > 0.0 ? 2.0 : 0.0));
  return w;
}

WorkEstimate search_work(std::size_t candidates) {
  const double n = static_cast<double>(candidates);
  return {kPerCandidate * n, kBaseMemory + kPerCandidateMemory * n};
}

WorkEstimate collective_simulation_work(int ranks, std::size_t sizes) {
  const double r = ranks;
  return {Seconds(kPerRankSquaredSeconds * r * r * static_cast<double>(sizes)), kBaseMemory + kPerRankMemory * r};
}

}  // namespace stepcast::planner
