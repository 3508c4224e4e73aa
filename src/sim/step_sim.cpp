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

// Timer payloads and network tags: kind in the top byte, stage in the next 24 bits, index below.
enum class Kind : std::uint64_t { kTaskDone = 1, kBucketReady = 2, kOptimizerDone = 3, kSend = 4, kBucketDone = 5 };
std::uint64_t tag(Kind k, int stage, std::uint32_t index) {
  return (static_cast<std::uint64_t>(k) << 56) | (static_cast<std::uint64_t>(stage) << 32) | index;
}
Kind kind_of(std::uint64_t t) { return static_cast<Kind>(t >> 56); }
int stage_of(std::uint64_t t) { return static_cast<int>((t >> 32) & 0xFFFFFF); }
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
  bool ready = false;
  bool done = false;
};

struct Stage {
  std::vector<PipelineOp> ops;
  std::size_t next = 0;
  bool busy = false;
  std::size_t last_grad_op = 0;  // the task whose end completes this stage's gradients
  std::vector<Bucket> buckets;
  std::size_t next_bucket = 0;
  bool comm_busy = false;
  des::Tick last_compute_end = 0;
  des::Tick finish = 0;
  des::Tick compute = 0;
  des::Tick tp = 0;
  des::Tick optimizer_start = 0;
  bool optimizer_started = false;
  des::Tick bucket_start = 0;
  std::vector<std::string> path;
};

class StepRun final : public des::TimerHandler, public TransferObserver, public CollectiveObserver {
 public:
  StepRun(const topology::Topology& topo, const StepSpec& spec, const Perturbation& pert, bool trace)
      : topo_(&topo), spec_(&spec), rng_(pert.seed), timers_(engine_, *this), runner_(*this),
        network_(topo, engine_, *this), trace_(trace), noise_cv_(pert.noise_cv) {
    runner_.attach(network_);
    engine_.add_model(timers_);
    engine_.add_model(network_);
    slow_.assign(static_cast<std::size_t>(spec.pp), 1.0);
    // A slow GPU slows its whole stage: its tensor-parallel peers wait for it inside every layer
    // and its data-parallel peers at every bucket, so the stage's representative runs at its pace.
    for (int g = 0; g < spec.pp * spec.tp * spec.dp && g < topo.gpu_count(); ++g) {
      const bool slow = (pert.slow_gpu && *pert.slow_gpu == g) || (pert.slow_node && *pert.slow_node == topo.node_of_gpu(g));
      if (slow) slow_[static_cast<std::size_t>((g / spec.tp) % spec.pp)] = pert.slowdown;
    }
    build();
  }

  StepResult run() {
    for (int s = 0; s < spec_->pp; ++s) try_start(s);
    engine_.run();
    return result();
  }

  void on_timer(des::Tick now, std::uint64_t payload) override {
    const int s = stage_of(payload);
    Stage& st = stages_[static_cast<std::size_t>(s)];
    switch (kind_of(payload)) {
      case Kind::kTaskDone: task_done(s, now); break;
      case Kind::kBucketReady:
        st.buckets[index_of(payload)].ready = true;
        launch_buckets(s);
        break;
      case Kind::kOptimizerDone: st.finish = now; break;
      default: STEPCAST_UNREACHABLE("unknown timer kind");
    }
  }

  void on_transfer_done(des::Tick now, std::uint64_t t) override {
    if (kind_of(t) != Kind::kSend) {
      runner_.on_transfer_done(now, t);
      return;
    }
    // index = (virtual stage << 16 | forward flag << 15 ... ) packed as vs * 2m + dir * m + mb
    const std::uint32_t i = index_of(t);
    const auto m = static_cast<std::uint32_t>(spec_->micro_batches);
    const std::uint32_t vs = i / (2 * m);
    const bool forward = ((i / m) % 2) == 0;
    const std::uint32_t mb = i % m;
    (forward ? fwd_ready_ : bwd_ready_)[vs * m + mb] = 1;
    try_start(static_cast<int>(vs % static_cast<std::uint32_t>(spec_->pp)));
    (void)now;
  }

  void on_collective_done(des::Tick now, std::uint64_t t) override {
    const int s = stage_of(t);
    Stage& st = stages_[static_cast<std::size_t>(s)];
    st.buckets[index_of(t)].done = true;
    st.comm_busy = false;
    span(spec_->pp + s, st.bucket_start, now, "gradient bucket");
    const auto tier = static_cast<int>(schedules_[st.buckets[index_of(t)].schedule].top_tier);
    span(2 * spec_->pp + tier, st.bucket_start, now, fmt::format("stage {} gradient bucket", s));
    launch_buckets(s);
  }

 private:
  int virtual_stages() const { return spec_->pp * spec_->vp; }

  void build() {
    const int pp = spec_->pp;
    const auto m = static_cast<std::size_t>(spec_->micro_batches);
    const auto v_stages = static_cast<std::size_t>(virtual_stages());
    fwd_ready_.assign(v_stages * m, 0);
    bwd_ready_.assign(v_stages * m, 0);
    for (std::size_t mb = 0; mb < m; ++mb) fwd_ready_[mb] = 1;  // virtual stage 0 reads its input
    stages_.resize(static_cast<std::size_t>(pp));
    for (int s = 0; s < pp; ++s) {
      Stage& st = stages_[static_cast<std::size_t>(s)];
      st.ops = pipeline_order(spec_->schedule, pp, s, spec_->micro_batches, spec_->vp);
      for (std::size_t i = 0; i < st.ops.size(); ++i) {
        if (st.ops[i].kind != PipelineOp::Kind::kForward) st.last_grad_op = i;
      }
      // Sends of each stage's tensor-parallel ranks to the next and previous stage, together.
      std::vector<std::pair<int, int>> next;
      std::vector<std::pair<int, int>> prev;
      for (int i = 0; i < spec_->tp; ++i) {
        const int me = s * spec_->stride_pp + i;
        next.emplace_back(me, ((s + 1) % pp) * spec_->stride_pp + i);
        prev.emplace_back(me, ((s + pp - 1) % pp) * spec_->stride_pp + i);
      }
      to_next_.push_back(network_.pattern(next));
      to_prev_.push_back(network_.pattern(prev));
      build_buckets(s);
    }
    tracks_.clear();
    for (int s = 0; s < pp; ++s) tracks_.push_back(fmt::format("GPU {} (stage {}) compute", s * spec_->stride_pp, s));
    for (int s = 0; s < pp; ++s) tracks_.push_back(fmt::format("GPU {} (stage {}) data-parallel comm", s * spec_->stride_pp, s));
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
      for (int r = 0; r < spec_->dp; ++r) g.push_back(s * spec_->stride_pp + i + r * spec_->stride_dp);
      groups.push_back(std::move(g));
    }
    double total = 0.0;
    for (const GradientSync& sync : spec_->syncs) total += sync.bucket.value() * sync.buckets;
    double cumulative = 0.0;
    for (const GradientSync& sync : spec_->syncs) {
      const double whole = std::floor(sync.buckets);
      const double rest = sync.buckets - whole;
      const auto add = [&](Bytes size) {
        schedules_.push_back(build_collective(network_, *topo_, sync.op, cost::Algorithm::kRing, size, groups));
        cumulative += size.value();
        st.buckets.push_back(Bucket{static_cast<std::uint32_t>(schedules_.size() - 1),
                                    total > 0.0 ? std::min(1.0, cumulative / total) : 1.0});
      };
      if (whole > 0.0) {
        // Full buckets share one schedule.
        schedules_.push_back(build_collective(network_, *topo_, sync.op, cost::Algorithm::kRing, sync.bucket, groups));
        const auto full = static_cast<std::uint32_t>(schedules_.size() - 1);
        for (double k = 0; k < whole; k += 1.0) {
          cumulative += sync.bucket.value();
          st.buckets.push_back(Bucket{full, total > 0.0 ? std::min(1.0, cumulative / total) : 1.0});
        }
      }
      if (rest > 1e-9) add(sync.bucket * rest);
    }
  }

  bool ready(int s, const PipelineOp& op) const {
    const auto m = static_cast<std::size_t>(spec_->micro_batches);
    const auto vs = static_cast<std::size_t>(op.chunk * spec_->pp + s);
    const auto mb = static_cast<std::size_t>(op.micro_batch);
    switch (op.kind) {
      case PipelineOp::Kind::kForward: return fwd_ready_[vs * m + mb] != 0;
      case PipelineOp::Kind::kBackward:
        // The last virtual stage starts the backward from its own forward (ordered before it).
        return vs + 1 == static_cast<std::size_t>(virtual_stages()) || bwd_ready_[vs * m + mb] != 0;
      case PipelineOp::Kind::kWeightGrad: return true;
    }
    return false;
  }

  double factor(int s) {
    double f = slow_[static_cast<std::size_t>(s)];
    if (noise_cv_ > 0.0) f *= std::max(0.05, 1.0 + noise_cv_ * standard_normal(rng_));
    return f;
  }

  void try_start(int s) {
    Stage& st = stages_[static_cast<std::size_t>(s)];
    if (st.busy || st.next >= st.ops.size()) return;
    const PipelineOp& op = st.ops[st.next];
    if (!ready(s, op)) return;
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
    const des::Tick compute = des::to_ticks(work * factor(s));
    const des::Tick comm = des::to_ticks(tp * slow_[static_cast<std::size_t>(s)]);
    st.busy = true;
    st.compute += compute;
    st.tp += comm;
    const des::Tick end = now + compute + comm;
    timers_.at(end, tag(Kind::kTaskDone, s, 0));
    const std::string name = op_name(op);
    if (trace_) span(s, now, end, name);
    if (st.path.size() < kPathHead || st.next + kPathTail >= st.ops.size()) st.path.push_back(name);
    if (st.next == st.last_grad_op) {
      for (std::size_t j = 0; j < st.buckets.size(); ++j) {
        const auto at = now + static_cast<des::Tick>(std::llround(static_cast<double>(compute + comm) * st.buckets[j].ready_fraction));
        timers_.at(at, tag(Kind::kBucketReady, s, static_cast<std::uint32_t>(j)));
      }
    }
  }

  static std::string op_name(const PipelineOp& op) {
    const char* k = op.kind == PipelineOp::Kind::kForward ? "F" : op.kind == PipelineOp::Kind::kBackward ? "B" : "W";
    return fmt::format("{}{}.{}", k, op.micro_batch, op.chunk);
  }

  void task_done(int s, des::Tick now) {
    Stage& st = stages_[static_cast<std::size_t>(s)];
    const PipelineOp op = st.ops[st.next];
    st.busy = false;
    st.last_compute_end = now;
    const auto m = static_cast<std::uint32_t>(spec_->micro_batches);
    const int vs = op.chunk * spec_->pp + s;
    if (op.kind == PipelineOp::Kind::kForward && vs + 1 < virtual_stages()) {
      const auto dst = static_cast<std::uint32_t>(vs + 1);
      network_.start(to_next_[static_cast<std::size_t>(s)], spec_->p2p_bytes,
                     tag(Kind::kSend, s, dst * 2 * m + static_cast<std::uint32_t>(op.micro_batch)));
    }
    if (op.kind == PipelineOp::Kind::kBackward && vs > 0) {
      const auto dst = static_cast<std::uint32_t>(vs - 1);
      network_.start(to_prev_[static_cast<std::size_t>(s)], spec_->p2p_bytes,
                     tag(Kind::kSend, s, dst * 2 * m + m + static_cast<std::uint32_t>(op.micro_batch)));
    }
    ++st.next;
    if (st.next == st.ops.size()) {
      if (st.buckets.empty()) start_optimizer(s);
    } else {
      try_start(s);
    }
  }

  void launch_buckets(int s) {
    Stage& st = stages_[static_cast<std::size_t>(s)];
    if (st.comm_busy) return;
    if (st.next_bucket < st.buckets.size()) {
      Bucket& b = st.buckets[st.next_bucket];
      if (!b.ready) return;
      st.comm_busy = true;
      st.bucket_start = engine_.now();
      runner_.start(schedules_[b.schedule], tag(Kind::kBucketDone, s, static_cast<std::uint32_t>(st.next_bucket)));
      ++st.next_bucket;
      return;
    }
    if (st.next == st.ops.size() && !st.optimizer_started) start_optimizer(s);
  }

  void start_optimizer(int s) {
    Stage& st = stages_[static_cast<std::size_t>(s)];
    const des::Tick now = engine_.now();
    st.optimizer_start = now;
    st.optimizer_started = true;
    const des::Tick fixed = des::to_ticks(spec_->fixed_exposed);
    const des::Tick opt = des::to_ticks(spec_->optimizer * slow_[static_cast<std::size_t>(s)] + spec_->post_optimizer);
    if (trace_) span(s, now + fixed, now + fixed + opt, "optimizer");
    timers_.at(now + fixed + opt, tag(Kind::kOptimizerDone, s, 0));
  }

  void span(int track, des::Tick start, des::Tick end, std::string name) {
    if (!trace_) return;
    spans_.push_back(TraceSpan{track, des::to_seconds(start).value(), des::to_seconds(end).value(), std::move(name)});
  }

  StepResult result() {
    StepResult r;
    int critical = 0;
    for (int s = 0; s < spec_->pp; ++s) {
      if (stages_[static_cast<std::size_t>(s)].finish > stages_[static_cast<std::size_t>(critical)].finish) critical = s;
    }
    const Stage& st = stages_[static_cast<std::size_t>(critical)];
    r.step_time = des::to_seconds(st.finish);
    r.critical_stage = critical;
    r.breakdown.compute = des::to_seconds(st.compute);
    r.breakdown.tp_comm = des::to_seconds(st.tp);
    r.breakdown.bubble = des::to_seconds(st.last_compute_end - st.compute - st.tp);
    r.breakdown.dp_exposed = des::to_seconds(st.optimizer_start - st.last_compute_end);
    r.breakdown.fixed_exposed = spec_->fixed_exposed;
    r.breakdown.optimizer = des::to_seconds(st.finish - st.optimizer_start) - spec_->fixed_exposed;
    r.critical_path = st.path;
    if (st.path.size() >= kPathHead + kPathTail && st.ops.size() > kPathHead + kPathTail) {
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
    r.simulated_ranks = spec_->pp;
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
  std::vector<double> slow_;
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
  const bool perturbed = perturbation.slowdown != 1.0 || perturbation.noise_cv > 0.0;
  if (perturbed) {
    StepRun calm(topo, spec, Perturbation{}, false);
    r.breakdown.straggler_wait = r.step_time - calm.run().step_time;
  }
  return r;
}

}  // namespace stepcast::sim
