// The training step as a task graph. Each stage's compute stream runs its schedule's tasks in
// order, each task waiting for the activation (forward) or gradient (backward) it consumes;
// sends and gradient buckets are flows on the network, so they contend where they share links.
#include "stepcast/sim/step_sim.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <numbers>
#include <random>

#include "stepcast/core/errors.hpp"
#include "stepcast/des/engine.hpp"
#include "stepcast/des/timer_model.hpp"
#include "stepcast/sim/collective_flows.hpp"
#include "stepcast/sim/network.hpp"
#include "stepcast/sim/pipeline_order.hpp"

namespace stepcast::sim {

namespace {

// Timer payloads and network tags: kind in the top byte, owner in the next 24 bits (the simulated
// rank, or the stage for its data-parallel comm stream), index below.
enum class Kind : std::uint64_t { kTaskDone = 1, kBucketReady = 2, kOptimizerDone = 3, kSend = 4, kBucketDone = 5 };
std::uint64_t tag(Kind k, int owner, std::uint32_t index) {
  return (static_cast<std::uint64_t>(k) << 56) | (static_cast<std::uint64_t>(owner) << 32) | index;
}
Kind kind_of(std::uint64_t t) { return static_cast<Kind>(t >> 56); }
int owner_of(std::uint64_t t) { return static_cast<int>((t >> 32) & 0xFFFFFF); }
std::uint32_t index_of(std::uint64_t t) { return static_cast<std::uint32_t>(t); }

// A standard normal draw from raw generator bits (Box-Muller), so the sequence is the same on
// every standard library (std::normal_distribution's algorithm is implementation-defined).
double standard_normal(std::mt19937_64& rng) {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  const double u1 = (static_cast<double>(rng() >> 11) + 0.5) * kTwoToMinus53;
  const double u2 = (static_cast<double>(rng() >> 11) + 0.5) * kTwoToMinus53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

struct Bucket {
  std::uint32_t schedule = 0;  // index into StepRun::schedules_
  double ready_fraction = 1.0;  // of the last gradient-producing task
  int ready = 0;                // simulated replicas whose gradients for it are ready
  bool done = false;
};

// A stage's task order and its data-parallel comm stream, which all its simulated replicas share:
// a bucket's collective spans the replicas, so it starts only when every one has the bucket ready.
struct Stage {
  std::vector<PipelineOp> ops;
  std::size_t last_grad_op = 0;  // the task whose end completes this stage's gradients
  std::vector<Bucket> buckets;
  std::size_t next_bucket = 0;
  bool comm_busy = false;
  des::Tick bucket_start = 0;
};

// One simulated rank: a stage of one data-parallel replica, standing for its tensor-parallel peers
// (and for all replicas when only one is simulated).
struct Rank {
  int stage = 0;
  int replica = 0;
  double factor = 1.0;  // step-level slowdown of the slowest GPU it stands for
  std::size_t next = 0;
  bool busy = false;
  des::Tick last_compute_end = 0;
  des::Tick finish = 0;
  des::Tick compute = 0;
  des::Tick tp = 0;
  des::Tick optimizer_start = 0;
  bool optimizer_started = false;
  std::vector<std::string> path;
};

// A compute factor never drops below this: a normal draw far in its left tail would otherwise
// make a task take no time or negative time.
constexpr double kMinFactor = 0.05;

class StepRun final : public des::TimerHandler, public TransferObserver, public CollectiveObserver {
 public:
  StepRun(const topology::Topology& topo, const StepSpec& spec, const Perturbation& pert, bool trace)
      : topo_(&topo), spec_(&spec), rng_(pert.seed), timers_(engine_, *this), runner_(*this),
        network_(topo, engine_, *this), trace_(trace), noise_cv_(pert.noise_cv),
        replicas_(pert.step_cv > 0.0 ? spec.dp : 1) {
    runner_.attach(network_);
    engine_.add_model(timers_);
    engine_.add_model(network_);
    place_ranks(pert);
    build();
  }

  StepResult run() {
    for (int k = 0; k < rank_count(); ++k) try_start(k);
    engine_.run();
    return result();
  }

  void on_timer(des::Tick now, std::uint64_t payload) override {
    const int k = owner_of(payload);
    switch (kind_of(payload)) {
      case Kind::kTaskDone: task_done(k, now); break;
      case Kind::kBucketReady: {
        const int s = rank(k).stage;
        ++stages_[static_cast<std::size_t>(s)].buckets[index_of(payload)].ready;
        launch_buckets(s);
        break;
      }
      case Kind::kOptimizerDone: rank(k).finish = now; break;
      default: STEPCAST_UNREACHABLE("unknown timer kind");
    }
  }

  void on_transfer_done(des::Tick now, std::uint64_t t) override {
    if (kind_of(t) != Kind::kSend) {
      runner_.on_transfer_done(now, t);
      return;
    }
    // index = destination virtual stage * 2m + (backward ? m : 0) + micro-batch
    const std::uint32_t i = index_of(t);
    const auto m = static_cast<std::uint32_t>(spec_->micro_batches);
    const auto vs = static_cast<int>(i / (2 * m));
    const bool forward = ((i / m) % 2) == 0;
    const auto mb = static_cast<int>(i % m);
    const int replica = rank(owner_of(t)).replica;
    (forward ? fwd_ready_ : bwd_ready_)[ready_index(replica, vs, mb)] = 1;
    try_start(rank_index(replica, vs % spec_->pp));
  }

  void on_collective_done(des::Tick now, std::uint64_t t) override {
    const int s = owner_of(t);
    Stage& st = stages_[static_cast<std::size_t>(s)];
    st.buckets[index_of(t)].done = true;
    st.comm_busy = false;
    if (trace_) {
      span(rank_count() + s, st.bucket_start, now, "gradient bucket");
      const auto tier = static_cast<int>(schedules_[st.buckets[index_of(t)].schedule].top_tier);
      span(rank_count() + spec_->pp + tier, st.bucket_start, now, fmt::format("stage {} gradient bucket", s));
    }
    launch_buckets(s);
  }

 private:
  int virtual_stages() const { return spec_->pp * spec_->vp; }
  int rank_count() const { return spec_->pp * replicas_; }
  int rank_index(int replica, int stage) const { return replica * spec_->pp + stage; }
  Rank& rank(int k) { return ranks_[static_cast<std::size_t>(k)]; }
  int gpu(int replica, int stage, int tp_rank) const {
    return replica * spec_->stride_dp + stage * spec_->stride_pp + tp_rank;
  }
  std::size_t ready_index(int replica, int vs, int mb) const {
    return (static_cast<std::size_t>(replica) * static_cast<std::size_t>(virtual_stages()) + static_cast<std::size_t>(vs)) *
               static_cast<std::size_t>(spec_->micro_batches) +
           static_cast<std::size_t>(mb);
  }

  // Each GPU's step factor is its slowdown times, under step noise, a Normal(1, step_cv) draw
  // (drawn in replica, stage, tensor-rank order). A rank runs at the pace of the slowest GPU it
  // stands for: its tensor-parallel peers wait for it inside every layer, and when one rank
  // stands for every replica, they wait for it at every bucket.
  void place_ranks(const Perturbation& pert) {
    ranks_.resize(static_cast<std::size_t>(rank_count()));
    for (int k = 0; k < rank_count(); ++k) {
      rank(k) = Rank{};
      rank(k).stage = k % spec_->pp;
      rank(k).replica = k / spec_->pp;
      rank(k).factor = 0.0;
    }
    for (int r = 0; r < spec_->dp; ++r) {
      for (int s = 0; s < spec_->pp; ++s) {
        Rank& rk = rank(rank_index(r % replicas_, s));
        for (int i = 0; i < spec_->tp; ++i) {
          const int g = gpu(r, s, i);
          const bool slow = g < topo_->gpu_count() && ((pert.slow_gpu && *pert.slow_gpu == g) ||
                                                       (pert.slow_node && *pert.slow_node == topo_->node_of_gpu(g)));
          double f = slow ? pert.slowdown : 1.0;
          if (pert.step_cv > 0.0) f *= std::max(kMinFactor, 1.0 + pert.step_cv * standard_normal(rng_));
          rk.factor = std::max(rk.factor, f);
        }
      }
    }
  }

  void build() {
    const int pp = spec_->pp;
    const auto cells = static_cast<std::size_t>(replicas_ * virtual_stages() * spec_->micro_batches);
    fwd_ready_.assign(cells, 0);
    bwd_ready_.assign(cells, 0);
    for (int r = 0; r < replicas_; ++r) {
      // Virtual stage 0 reads its input.
      for (int mb = 0; mb < spec_->micro_batches; ++mb) fwd_ready_[ready_index(r, 0, mb)] = 1;
    }
    stages_.resize(static_cast<std::size_t>(pp));
    for (int s = 0; s < pp; ++s) {
      Stage& st = stages_[static_cast<std::size_t>(s)];
      st.ops = pipeline_order(spec_->schedule, pp, s, spec_->micro_batches, spec_->vp);
      for (std::size_t i = 0; i < st.ops.size(); ++i) {
        if (st.ops[i].kind != PipelineOp::Kind::kForward) st.last_grad_op = i;
      }
      build_buckets(s);
    }
    for (int k = 0; k < rank_count(); ++k) {
      // Sends of each rank's tensor-parallel group to the next and previous stage, together.
      const Rank& rk = rank(k);
      std::vector<std::pair<int, int>> next;
      std::vector<std::pair<int, int>> prev;
      for (int i = 0; i < spec_->tp; ++i) {
        const int me = gpu(rk.replica, rk.stage, i);
        next.emplace_back(me, gpu(rk.replica, (rk.stage + 1) % pp, i));
        prev.emplace_back(me, gpu(rk.replica, (rk.stage + pp - 1) % pp, i));
      }
      to_next_.push_back(network_.pattern(next));
      to_prev_.push_back(network_.pattern(prev));
    }
    tracks_.clear();
    for (int k = 0; k < rank_count(); ++k) {
      const Rank& rk = rank(k);
      const int g = gpu(rk.replica, rk.stage, 0);
      tracks_.push_back(replicas_ == 1 ? fmt::format("GPU {} (stage {}) compute", g, rk.stage)
                                       : fmt::format("GPU {} (stage {}, replica {}) compute", g, rk.stage, rk.replica));
    }
    for (int s = 0; s < pp; ++s) tracks_.push_back(fmt::format("GPU {} (stage {}) data-parallel comm", gpu(0, s, 0), s));
    for (const auto tier : {topology::LinkTier::kIntraNode, topology::LinkTier::kNic, topology::LinkTier::kFabric}) {
      tracks_.push_back(fmt::format("links: {}", topology::to_string(tier)));
    }
  }

  // Buckets of every gradient sync, in order; bucket j of all syncs becomes ready when the
  // cumulative bytes up to it have been produced by the last gradient task (evenly over its time).
  void build_buckets(int s) {
    Stage& st = stages_[static_cast<std::size_t>(s)];
    if (spec_->dp <= 1) return;
    std::vector<std::vector<int>> groups;
    for (int i = 0; i < spec_->tp; ++i) {
      std::vector<int> g;
      for (int r = 0; r < spec_->dp; ++r) g.push_back(gpu(r, s, i));
      groups.push_back(std::move(g));
    }
    double total = 0.0;
    for (const GradientSync& sync : spec_->syncs) total += sync.bucket.value() * sync.buckets;
    double cumulative = 0.0;
    const auto push = [&](std::uint32_t schedule, Bytes size) {
      cumulative += size.value();
      st.buckets.push_back(Bucket{schedule, total > 0.0 ? std::min(1.0, cumulative / total) : 1.0});
    };
    for (const GradientSync& sync : spec_->syncs) {
      const double whole = std::floor(sync.buckets);
      const double rest = sync.buckets - whole;
      if (whole > 0.0) {
        // Full buckets share one schedule.
        schedules_.push_back(build_collective(network_, *topo_, sync.op, cost::Algorithm::kRing, sync.bucket, groups));
        const auto full = static_cast<std::uint32_t>(schedules_.size() - 1);
        for (double j = 0; j < whole; j += 1.0) push(full, sync.bucket);
      }
      if (rest > 1e-9) {
        schedules_.push_back(build_collective(network_, *topo_, sync.op, cost::Algorithm::kRing, sync.bucket * rest, groups));
        push(static_cast<std::uint32_t>(schedules_.size() - 1), sync.bucket * rest);
      }
    }
  }

  bool ready(const Rank& rk, const PipelineOp& op) const {
    const int vs = op.chunk * spec_->pp + rk.stage;
    switch (op.kind) {
      case PipelineOp::Kind::kForward: return fwd_ready_[ready_index(rk.replica, vs, op.micro_batch)] != 0;
      case PipelineOp::Kind::kBackward:
        // The last virtual stage starts the backward from its own forward (ordered before it).
        return vs + 1 == virtual_stages() || bwd_ready_[ready_index(rk.replica, vs, op.micro_batch)] != 0;
      case PipelineOp::Kind::kWeightGrad: return true;
    }
    return false;
  }

  double task_noise() {
    return noise_cv_ > 0.0 ? std::max(kMinFactor, 1.0 + noise_cv_ * standard_normal(rng_)) : 1.0;
  }

  void try_start(int k) {
    Rank& rk = rank(k);
    const Stage& st = stages_[static_cast<std::size_t>(rk.stage)];
    if (rk.busy || rk.next >= st.ops.size()) return;
    const PipelineOp& op = st.ops[rk.next];
    if (!ready(rk, op)) return;
    const double v = spec_->vp;
    const bool zb = spec_->schedule == plan::Schedule::kZbH1;
    Seconds work;
    Seconds tp;
    switch (op.kind) {
      case PipelineOp::Kind::kForward:
        work = spec_->forward / v;
        tp = spec_->tp_forward / v;
        break;
      case PipelineOp::Kind::kBackward:
        work = spec_->backward * (zb ? 1.0 - spec_->weight_grad_share : 1.0) / v;
        tp = spec_->tp_backward / v;
        break;
      case PipelineOp::Kind::kWeightGrad: work = spec_->backward * spec_->weight_grad_share / v; break;
    }
    const des::Tick now = engine_.now();
    const des::Tick compute = des::to_ticks(work * (rk.factor * task_noise()));
    const des::Tick comm = des::to_ticks(tp);
    rk.busy = true;
    rk.compute += compute;
    rk.tp += comm;
    const des::Tick end = now + compute + comm;
    timers_.at(end, tag(Kind::kTaskDone, k, 0));
    const std::string name = op_name(op);
    if (trace_) span(k, now, end, name);
    if (rk.path.size() < kPathHead || rk.next + kPathTail >= st.ops.size()) rk.path.push_back(name);
    if (rk.next == st.last_grad_op) {
      for (std::size_t j = 0; j < st.buckets.size(); ++j) {
        const auto at = now + static_cast<des::Tick>(std::llround(static_cast<double>(compute + comm) * st.buckets[j].ready_fraction));
        timers_.at(at, tag(Kind::kBucketReady, k, static_cast<std::uint32_t>(j)));
      }
    }
  }

  static std::string op_name(const PipelineOp& op) {
    const char* k = op.kind == PipelineOp::Kind::kForward ? "F" : op.kind == PipelineOp::Kind::kBackward ? "B" : "W";
    return fmt::format("{}{}.{}", k, op.micro_batch, op.chunk);
  }

  void task_done(int k, des::Tick now) {
    Rank& rk = rank(k);
    const Stage& st = stages_[static_cast<std::size_t>(rk.stage)];
    const PipelineOp op = st.ops[rk.next];
    rk.busy = false;
    rk.last_compute_end = now;
    const auto m = static_cast<std::uint32_t>(spec_->micro_batches);
    const int vs = op.chunk * spec_->pp + rk.stage;
    const auto ku = static_cast<std::size_t>(k);
    if (op.kind == PipelineOp::Kind::kForward && vs + 1 < virtual_stages()) {
      const auto dst = static_cast<std::uint32_t>(vs + 1);
      network_.start(to_next_[ku], spec_->p2p_bytes, tag(Kind::kSend, k, dst * 2 * m + static_cast<std::uint32_t>(op.micro_batch)));
    }
    if (op.kind == PipelineOp::Kind::kBackward && vs > 0) {
      const auto dst = static_cast<std::uint32_t>(vs - 1);
      network_.start(to_prev_[ku], spec_->p2p_bytes,
                     tag(Kind::kSend, k, dst * 2 * m + m + static_cast<std::uint32_t>(op.micro_batch)));
    }
    ++rk.next;
    if (rk.next < st.ops.size()) {
      try_start(k);
    } else if (st.buckets.empty()) {
      start_optimizer(k);
    }
    // Otherwise the optimizer waits for the stage's last bucket (launch_buckets).
  }

  void launch_buckets(int s) {
    Stage& st = stages_[static_cast<std::size_t>(s)];
    if (st.comm_busy) return;
    if (st.next_bucket < st.buckets.size()) {
      const Bucket& b = st.buckets[st.next_bucket];
      if (b.ready < replicas_) return;
      st.comm_busy = true;
      st.bucket_start = engine_.now();
      runner_.start(schedules_[b.schedule], tag(Kind::kBucketDone, s, static_cast<std::uint32_t>(st.next_bucket)));
      ++st.next_bucket;
      return;
    }
    for (int r = 0; r < replicas_; ++r) {
      const int k = rank_index(r, s);
      if (rank(k).next == st.ops.size() && !rank(k).optimizer_started) start_optimizer(k);
    }
  }

  void start_optimizer(int k) {
    Rank& rk = rank(k);
    const des::Tick now = engine_.now();
    rk.optimizer_start = now;
    rk.optimizer_started = true;
    const des::Tick fixed = des::to_ticks(spec_->fixed_exposed);
    const des::Tick opt = des::to_ticks(spec_->optimizer * rk.factor + spec_->post_optimizer);
    if (trace_) span(k, now + fixed, now + fixed + opt, "optimizer");
    timers_.at(now + fixed + opt, tag(Kind::kOptimizerDone, k, 0));
  }

  void span(int track, des::Tick start, des::Tick end, std::string name) {
    if (!trace_) return;
    spans_.push_back(TraceSpan{track, des::to_seconds(start).value(), des::to_seconds(end).value(), std::move(name)});
  }

  StepResult result() {
    StepResult r;
    int critical = 0;
    for (int k = 0; k < rank_count(); ++k) {
      if (rank(k).finish > rank(critical).finish) critical = k;
      r.rank_compute.push_back(des::to_seconds(rank(k).compute));
    }
    const Rank& rk = rank(critical);
    const Stage& st = stages_[static_cast<std::size_t>(rk.stage)];
    r.step_time = des::to_seconds(rk.finish);
    r.critical_stage = rk.stage;
    r.breakdown.compute = des::to_seconds(rk.compute);
    r.breakdown.tp_comm = des::to_seconds(rk.tp);
    r.breakdown.bubble = des::to_seconds(rk.last_compute_end - rk.compute - rk.tp);
    r.breakdown.dp_exposed = des::to_seconds(rk.optimizer_start - rk.last_compute_end);
    r.breakdown.fixed_exposed = spec_->fixed_exposed;
    r.breakdown.optimizer = des::to_seconds(rk.finish - rk.optimizer_start) - spec_->fixed_exposed;
    r.critical_path = rk.path;
    if (rk.path.size() >= kPathHead + kPathTail && st.ops.size() > kPathHead + kPathTail) {
      r.critical_path.insert(r.critical_path.begin() + static_cast<std::ptrdiff_t>(kPathHead),
                             fmt::format("... {} tasks ...", st.ops.size() - kPathHead - kPathTail));
    }
    if (!st.buckets.empty()) r.critical_path.push_back(fmt::format("{} gradient buckets", st.buckets.size()));
    r.critical_path.push_back("optimizer");
    const TierTraffic& t = network_.traffic();
    for (std::size_t i = 0; i < t.bytes.size(); ++i) {
      const double cap = t.capacity[i] * r.step_time.value();
      r.tier_utilization.push_back(cap > 0.0 ? t.bytes[i] / cap : 0.0);
    }
    r.tracks = tracks_;
    r.spans = std::move(spans_);
    r.events = timers_.fired() + engine_.activations();
    r.simulated_ranks = rank_count();
    return r;
  }

  static constexpr std::size_t kPathHead = 4;
  static constexpr std::size_t kPathTail = 4;

  const topology::Topology* topo_;
  const StepSpec* spec_;
  std::mt19937_64 rng_;
  des::Engine engine_;
  des::TimerModel timers_;
  CollectiveRunner runner_;
  Network network_;
  bool trace_;
  double noise_cv_;
  int replicas_;  // data-parallel replicas simulated: all under step noise, else one for all
  std::vector<Rank> ranks_;
  std::vector<Stage> stages_;
  std::vector<char> fwd_ready_;
  std::vector<char> bwd_ready_;
  std::vector<TransferPattern> to_next_;
  std::vector<TransferPattern> to_prev_;
  std::vector<CollectiveSchedule> schedules_;
  std::vector<std::string> tracks_;
  std::vector<TraceSpan> spans_;
};

}  // namespace

StepResult simulate_step(const topology::Topology& topo, const StepSpec& spec, const Perturbation& perturbation,
                         bool record_trace) {
  STEPCAST_ASSERT(spec.pp >= 1 && spec.tp >= 1 && spec.dp >= 1 && spec.vp >= 1 && spec.micro_batches >= 1,
                  "a step needs positive degrees and micro-batches");
  STEPCAST_ASSERT(spec.pp * spec.tp * spec.dp <= topo.gpu_count(), "the plan must fit the topology");
  StepRun run(topo, spec, perturbation, record_trace);
  StepResult r = run.run();
  const bool perturbed = perturbation.slowdown != 1.0 || perturbation.noise_cv > 0.0 || perturbation.step_cv > 0.0;
  if (perturbed) {
    StepRun calm(topo, spec, Perturbation{}, false);
    r.breakdown.straggler_wait = r.step_time - calm.run().step_time;
  }
  return r;
}

}  // namespace stepcast::sim
