// The training step as a task graph. Each rank's compute stream runs its stage's schedule in
// order, each task waiting for the activation (forward) or gradient (backward) it consumes. A task
// runs layer by layer, slice by slice: tensor-parallel collectives between slices, FSDP gathers
// before layers and reduce-scatters after them. Sends, gradient buckets and every collective are
// flows on the network, so they contend where they share links.
#include "stepcast/sim/step_sim.hpp"

#include <algorithm>
#include <array>
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
#include "step_graph.hpp"

namespace stepcast::sim {

namespace {

// Timer payloads and network tags: kind in the top byte, owner in the next 24 bits (the simulated
// rank, or the stage for its data-parallel comm stream), index below.
enum class Kind : std::uint64_t {
  kSliceDone = 1,
  kBucketReady = 2,
  kOptimizerDone = 3,
  kSend = 4,
  kStreamDone = 5,
  kTensorDone = 6
};
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

// A compute factor never drops below this: a normal draw far in its left tail would otherwise
// make a task take no time or negative time.
constexpr double kMinFactor = 0.05;

struct Bucket {
  std::uint32_t schedule = 0;   // index into StepRun::schedules_
  double ready_fraction = 1.0;  // of the last gradient-producing task
};

// A collective on a stage's data-parallel comm stream. Every simulated replica issues the same
// sequence, so the i-th request of each is the same collective; it starts when all have issued it.
struct Request {
  std::uint32_t schedule = 0;
  RequestKind kind = RequestKind::kBucket;
  int issued = 0;
  bool done = false;
  std::int64_t node = -1;  // in StepRun::nodes_, once started
};

// FSDP schedules of a stage: [0] one layer's, [1] the first layer's with the root parameters.
struct ShardSchedules {
  std::array<std::uint32_t, 2> gather{};
  std::array<std::uint32_t, 2> reduce_scatter{};
  std::array<std::uint32_t, 2> replica_all_reduce{};
};

// A stage's task order and its data-parallel comm stream, shared by its simulated replicas: the
// collectives span the replicas.
struct Stage {
  std::vector<PipelineOp> ops;
  std::size_t last_grad_op = 0;  // the task whose end completes this stage's gradients
  std::vector<Bucket> buckets;
  ShardSchedules shard;
  std::vector<Request> requests;  // in issue order
  std::size_t next_request = 0;   // the first not started
  bool comm_busy = false;
  des::Tick comm_start = 0;
};

// One simulated rank: a stage of one data-parallel replica, standing for its tensor-parallel peers
// (and for all replicas when only one is simulated).
struct Rank {
  int stage = 0;
  int replica = 0;
  double factor = 1.0;  // step-level slowdown of the slowest GPU it stands for
  std::vector<std::uint32_t> tensor_schedules;  // one per TensorParallelComm::ops
  std::size_t next = 0;  // task
  bool busy = false;
  // The task in progress: layers and slices done, its noise, the gathers it waits for.
  int layer = 0;
  int slice = 0;
  std::size_t tensor_op = 0;
  double task_factor = 1.0;
  des::Tick task_start = 0;
  des::Tick tensor_start = 0;
  std::int64_t gather = -1;    // request of the current layer's gather
  std::int64_t prefetch = -1;  // request of the next layer's gather
  bool waiting = false;
  des::Tick wait_start = 0;
  std::size_t issued = 0;          // requests issued on the stage's stream
  std::size_t buckets_issued = 0;
  // Accounting.
  des::Tick last_compute_end = 0;
  des::Tick finish = 0;
  des::Tick compute = 0;
  des::Tick tensor = 0;
  des::Tick gather_wait = 0;
  des::Tick optimizer_start = 0;
  bool optimizer_started = false;
  std::int64_t task_node = -1;  // the latest node of the task in progress (or the last task)
  std::int64_t optimizer_node = -1;
};

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
    for (int k = 0; k < rank_count(); ++k) try_start(k, -1);
    engine_.run();
    return result();
  }

  void on_timer(des::Tick now, std::uint64_t payload) override {
    const int k = owner_of(payload);
    switch (kind_of(payload)) {
      case Kind::kSliceDone: slice_done(k); break;
      case Kind::kBucketReady: {
        Rank& rk = rank(k);
        ++rk.buckets_issued;
        issue(k, RequestKind::kBucket, stage_of(rk).buckets[index_of(payload)].schedule);
        break;
      }
      case Kind::kOptimizerDone:
        rank(k).finish = now;
        nodes_[static_cast<std::size_t>(rank(k).optimizer_node)].end = now;
        break;
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
    const std::size_t cell = ready_index(replica, vs, mb);
    (forward ? fwd_ready_ : bwd_ready_)[cell] = 1;
    const std::int64_t send = (forward ? fwd_send_ : bwd_send_)[cell];
    nodes_[static_cast<std::size_t>(send)].end = now;
    try_start(rank_index(replica, vs % spec_->pp), send);
  }

  void on_collective_done(des::Tick now, std::uint64_t t) override {
    if (kind_of(t) == Kind::kTensorDone) {
      tensor_done(owner_of(t), now);
    } else {
      stream_done(owner_of(t), index_of(t), now);
    }
  }

 private:
  int virtual_stages() const { return spec_->pp * spec_->vp; }
  int rank_count() const { return spec_->pp * replicas_; }
  int rank_index(int replica, int stage) const { return replica * spec_->pp + stage; }
  Rank& rank(int k) { return ranks_[static_cast<std::size_t>(k)]; }
  Stage& stage_of(const Rank& rk) { return stages_[static_cast<std::size_t>(rk.stage)]; }
  const PipelineOp& op_of(Rank& rk) { return stage_of(rk).ops[rk.next]; }
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

  std::uint32_t add_schedule(cost::CollectiveOp op, Bytes size, std::span<const std::vector<int>> groups) {
    schedules_.push_back(build_collective(network_, *topo_, op, cost::Algorithm::kRing, size, groups));
    return static_cast<std::uint32_t>(schedules_.size() - 1);
  }

  void build() {
    const int pp = spec_->pp;
    const auto cells = static_cast<std::size_t>(replicas_ * virtual_stages() * spec_->micro_batches);
    fwd_ready_.assign(cells, 0);
    bwd_ready_.assign(cells, 0);
    fwd_send_.assign(cells, -1);
    bwd_send_.assign(cells, -1);
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
      if (spec_->sharded) build_shards(s);
    }
    for (int k = 0; k < rank_count(); ++k) {
      // Sends of each rank's tensor-parallel group to the next and previous stage, together.
      Rank& rk = rank(k);
      std::vector<std::pair<int, int>> next;
      std::vector<std::pair<int, int>> prev;
      std::vector<std::vector<int>> group(1);
      for (int i = 0; i < spec_->tp; ++i) {
        const int me = gpu(rk.replica, rk.stage, i);
        next.emplace_back(me, gpu(rk.replica, (rk.stage + 1) % pp, i));
        prev.emplace_back(me, gpu(rk.replica, (rk.stage + pp - 1) % pp, i));
        group.front().push_back(me);
      }
      to_next_.push_back(network_.pattern(next));
      to_prev_.push_back(network_.pattern(prev));
      if (spec_->tensor_parallel) {
        for (const cost::CollectiveOp op : spec_->tensor_parallel->ops) {
          rk.tensor_schedules.push_back(add_schedule(op, spec_->tensor_parallel->size, group));
        }
      }
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
  // cumulative bytes up to it have been produced by the last gradient task (evenly over its compute).
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
        const std::uint32_t full = add_schedule(sync.op, sync.bucket, groups);
        for (double j = 0; j < whole; j += 1.0) push(full, sync.bucket);
      }
      if (rest > 1e-9) push(add_schedule(sync.op, sync.bucket * rest, groups), sync.bucket * rest);
    }
  }

  // Shard groups are consecutive data-parallel replicas; HYBRID_SHARD's replica groups take one
  // rank of each shard group (PyTorch FSDP's device mesh: shard dimension innermost).
  void build_shards(int s) {
    const ShardedLayers& sh = *spec_->sharded;
    Stage& st = stages_[static_cast<std::size_t>(s)];
    const int shard = std::clamp(sh.shard_ranks, 1, spec_->dp);
    const int replica_groups = spec_->dp / shard;
    std::vector<std::vector<int>> shards;
    std::vector<std::vector<int>> replicas;
    for (int i = 0; i < spec_->tp; ++i) {
      for (int h = 0; h < replica_groups; ++h) {
        std::vector<int> g;
        for (int q = 0; q < shard; ++q) g.push_back(gpu(h * shard + q, s, i));
        shards.push_back(std::move(g));
      }
      for (int q = 0; q < shard; ++q) {
        std::vector<int> g;
        for (int h = 0; h < replica_groups; ++h) g.push_back(gpu(h * shard + q, s, i));
        replicas.push_back(std::move(g));
      }
    }
    const auto both = [&](cost::CollectiveOp op, Bytes layer, Bytes root, std::span<const std::vector<int>> groups) {
      const std::uint32_t one = add_schedule(op, layer, groups);
      return std::array<std::uint32_t, 2>{one, root.value() > 0.0 ? add_schedule(op, layer + root, groups) : one};
    };
    st.shard.gather = both(cost::CollectiveOp::kAllGather, sh.gather, sh.root_gather, shards);
    st.shard.reduce_scatter = both(cost::CollectiveOp::kReduceScatter, sh.reduce_scatter, sh.root_reduce_scatter, shards);
    if (sh.replica_all_reduce.value() > 0.0) {
      st.shard.replica_all_reduce =
          both(cost::CollectiveOp::kAllReduce, sh.replica_all_reduce, sh.root_replica_all_reduce, replicas);
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

  // Tasks run layer by layer only when something happens between layers or inside them.
  int layers_of(const PipelineOp& op) const {
    const bool split = spec_->tensor_parallel || spec_->sharded;
    return split && op.kind != PipelineOp::Kind::kWeightGrad ? spec_->layers : 1;
  }
  int slices_of(const PipelineOp& op) const {
    if (!spec_->tensor_parallel) return 1;
    switch (op.kind) {
      case PipelineOp::Kind::kForward: return spec_->tensor_parallel->forward_slices;
      case PipelineOp::Kind::kBackward: return spec_->tensor_parallel->backward_slices;
      case PipelineOp::Kind::kWeightGrad: return 1;
    }
    return 1;
  }
  Seconds work_of(const PipelineOp& op) const {
    const double v = spec_->vp;
    const bool zb = spec_->schedule == plan::Schedule::kZbH1;
    switch (op.kind) {
      case PipelineOp::Kind::kForward: return spec_->forward / v;
      case PipelineOp::Kind::kBackward: return spec_->backward * (zb ? 1.0 - spec_->weight_grad_share : 1.0) / v;
      case PipelineOp::Kind::kWeightGrad: return spec_->backward * spec_->weight_grad_share / v;
    }
    return Seconds(0.0);
  }
  bool gathers_before(const PipelineOp& op) const {
    return spec_->sharded && (op.kind == PipelineOp::Kind::kForward ||
                              (op.kind == PipelineOp::Kind::kBackward && spec_->sharded->regather));
  }
  // Schedule variant of the layer at position `pos` of the task: the model chunk's first layer
  // carries the root parameters (first in the forward, last in the backward).
  std::size_t variant(const PipelineOp& op, int pos) const {
    const int first = op.kind == PipelineOp::Kind::kForward ? 0 : layers_of(op) - 1;
    return op.chunk == 0 && pos == first ? 1 : 0;
  }

  // Starts the rank's next task if its input is there; `trigger` is the node whose end called.
  void try_start(int k, std::int64_t trigger) {
    Rank& rk = rank(k);
    const Stage& st = stage_of(rk);
    if (rk.busy || rk.next >= st.ops.size()) return;
    const PipelineOp& op = st.ops[rk.next];
    if (!ready(rk, op)) return;
    rk.busy = true;
    rk.layer = 0;
    rk.slice = 0;
    rk.task_factor = rk.factor * task_noise();
    rk.task_start = engine_.now();
    rk.task_node = add_node(PathNode::Kind::kTask, rk, trigger);
    nodes_.back().op = op;
    layer_begin(k);
  }

  std::int64_t add_node(PathNode::Kind kind, const Rank& rk, std::int64_t pred) {
    PathNode n;
    n.kind = kind;
    n.start = engine_.now();
    n.end = n.start;
    n.pred = pred;
    n.stage = rk.stage;
    n.replica = rk.replica;
    nodes_.push_back(n);
    return static_cast<std::int64_t>(nodes_.size() - 1);
  }

  void layer_begin(int k) {
    Rank& rk = rank(k);
    const PipelineOp& op = op_of(rk);
    if (gathers_before(op)) {
      if (rk.gather < 0) rk.gather = issue(k, RequestKind::kGather, stage_of(rk).shard.gather[variant(op, rk.layer)]);
      if (!stage_of(rk).requests[static_cast<std::size_t>(rk.gather)].done) {
        rk.waiting = true;
        rk.wait_start = engine_.now();
        return;
      }
    }
    layer_compute(k);
  }

  // The layer's parameters are here: prefetch the next layer's, then compute.
  void layer_compute(int k) {
    Rank& rk = rank(k);
    const PipelineOp& op = op_of(rk);
    if (gathers_before(op) && rk.layer + 1 < layers_of(op)) {
      rk.prefetch = issue(k, RequestKind::kGather, stage_of(rk).shard.gather[variant(op, rk.layer + 1)]);
    }
    start_slice(k);
  }

  void start_slice(int k) {
    Rank& rk = rank(k);
    const Stage& st = stage_of(rk);
    const PipelineOp& op = st.ops[rk.next];
    const int per_layer = slices_of(op);
    const double slices = layers_of(op) * per_layer;
    const des::Tick now = engine_.now();
    const des::Tick compute = des::to_ticks(work_of(op) / slices * rk.task_factor);
    rk.compute += compute;
    timers_.at(now + compute, tag(Kind::kSliceDone, k, 0));
    if (rk.next == st.last_grad_op) {
      // Buckets whose bytes this slice completes become ready in proportion through it.
      const double done = rk.layer * per_layer + rk.slice;
      const double f0 = done / slices;
      const double f1 = (done + 1.0) / slices;
      for (std::size_t j = 0; j < st.buckets.size(); ++j) {
        const double f = st.buckets[j].ready_fraction;
        if (f <= f0 || f > f1) continue;
        const auto at = now + static_cast<des::Tick>(std::llround(static_cast<double>(compute) * (f - f0) / (f1 - f0)));
        timers_.at(at, tag(Kind::kBucketReady, k, static_cast<std::uint32_t>(j)));
      }
    }
  }

  void slice_done(int k) {
    Rank& rk = rank(k);
    if (!rk.tensor_schedules.empty() && op_of(rk).kind != PipelineOp::Kind::kWeightGrad) {
      rk.tensor_op = 0;
      rk.tensor_start = engine_.now();
      runner_.start(schedules_[rk.tensor_schedules.front()], tag(Kind::kTensorDone, k, 0));
      return;
    }
    slice_end(k);
  }

  void tensor_done(int k, des::Tick now) {
    Rank& rk = rank(k);
    if (++rk.tensor_op < rk.tensor_schedules.size()) {
      runner_.start(schedules_[rk.tensor_schedules[rk.tensor_op]], tag(Kind::kTensorDone, k, 0));
      return;
    }
    rk.tensor += now - rk.tensor_start;
    slice_end(k);
  }

  void slice_end(int k) {
    Rank& rk = rank(k);
    const PipelineOp& op = op_of(rk);
    if (++rk.slice < slices_of(op)) {
      start_slice(k);
      return;
    }
    if (spec_->sharded && op.kind == PipelineOp::Kind::kBackward) {
      // The layer's gradients are complete: reduce-scatter them (and all-reduce over replicas).
      const ShardSchedules& sh = stage_of(rk).shard;
      const std::size_t v = variant(op, rk.layer);
      issue(k, RequestKind::kReduceScatter, sh.reduce_scatter[v]);
      if (spec_->sharded->replica_all_reduce.value() > 0.0) issue(k, RequestKind::kReplicaAllReduce, sh.replica_all_reduce[v]);
    }
    rk.slice = 0;
    rk.gather = rk.prefetch;
    rk.prefetch = -1;
    if (++rk.layer < layers_of(op)) {
      layer_begin(k);
    } else {
      task_done(k, engine_.now());
    }
  }

  void task_done(int k, des::Tick now) {
    Rank& rk = rank(k);
    const Stage& st = stage_of(rk);
    const PipelineOp op = st.ops[rk.next];
    rk.busy = false;
    rk.last_compute_end = now;
    nodes_[static_cast<std::size_t>(rk.task_node)].end = now;
    if (trace_) span(k, rk.task_start, now, task_name(op));
    const auto m = static_cast<std::uint32_t>(spec_->micro_batches);
    const int vs = op.chunk * spec_->pp + rk.stage;
    const auto ku = static_cast<std::size_t>(k);
    if (op.kind == PipelineOp::Kind::kForward && vs + 1 < virtual_stages()) {
      const auto dst = static_cast<std::uint32_t>(vs + 1);
      fwd_send_[ready_index(rk.replica, vs + 1, op.micro_batch)] = add_send(rk, op, vs + 1);
      network_.start(to_next_[ku], spec_->p2p_bytes, tag(Kind::kSend, k, dst * 2 * m + static_cast<std::uint32_t>(op.micro_batch)));
    }
    if (op.kind == PipelineOp::Kind::kBackward && vs > 0) {
      const auto dst = static_cast<std::uint32_t>(vs - 1);
      bwd_send_[ready_index(rk.replica, vs - 1, op.micro_batch)] = add_send(rk, op, vs - 1);
      network_.start(to_prev_[ku], spec_->p2p_bytes,
                     tag(Kind::kSend, k, dst * 2 * m + m + static_cast<std::uint32_t>(op.micro_batch)));
    }
    ++rk.next;
    if (rk.next < st.ops.size()) {
      try_start(k, rk.task_node);
    } else {
      maybe_start_optimizer(k, rk.task_node);
    }
  }

  std::int64_t add_send(const Rank& rk, const PipelineOp& op, int to_virtual_stage) {
    const std::int64_t id = add_node(PathNode::Kind::kSend, rk, rk.task_node);
    nodes_.back().op = op;
    nodes_.back().to_stage = to_virtual_stage % spec_->pp;
    return id;
  }

  // Appends (or joins) the next collective of the rank's stage stream; returns its index.
  std::int64_t issue(int k, RequestKind kind, std::uint32_t schedule) {
    Rank& rk = rank(k);
    Stage& st = stage_of(rk);
    const std::size_t i = rk.issued++;
    if (i == st.requests.size()) st.requests.push_back(Request{schedule, kind});
    Request& req = st.requests[i];
    STEPCAST_ASSERT(req.schedule == schedule, "every replica issues the same collectives in the same order");
    ++req.issued;
    pump(rk.stage, rk.task_node);
    return static_cast<std::int64_t>(i);
  }

  // Starts the stream's next collective if the stream is free and every replica has issued it;
  // `trigger` is the node whose end called (an issuing task, or the previous collective).
  void pump(int s, std::int64_t trigger) {
    Stage& st = stages_[static_cast<std::size_t>(s)];
    if (st.comm_busy || st.next_request >= st.requests.size()) return;
    Request& req = st.requests[st.next_request];
    if (req.issued < replicas_) return;
    st.comm_busy = true;
    st.comm_start = engine_.now();
    req.node = add_node(PathNode::Kind::kRequest, rank(rank_index(0, s)), trigger);
    nodes_.back().request = req.kind;
    runner_.start(schedules_[req.schedule], tag(Kind::kStreamDone, s, static_cast<std::uint32_t>(st.next_request)));
    ++st.next_request;
  }

  void stream_done(int s, std::uint32_t i, des::Tick now) {
    Stage& st = stages_[static_cast<std::size_t>(s)];
    Request& req = st.requests[i];
    req.done = true;
    st.comm_busy = false;
    nodes_[static_cast<std::size_t>(req.node)].end = now;
    if (trace_) {
      span(rank_count() + s, st.comm_start, now, std::string(to_string(req.kind)));
      const auto tier = static_cast<int>(schedules_[req.schedule].top_tier);
      span(rank_count() + spec_->pp + tier, st.comm_start, now, fmt::format("stage {} {}", s, to_string(req.kind)));
    }
    for (int r = 0; r < replicas_; ++r) {
      const int k = rank_index(r, s);
      Rank& rk = rank(k);
      if (rk.waiting && rk.gather == static_cast<std::int64_t>(i)) {
        // The task goes on as a new node that the gather let start.
        rk.waiting = false;
        rk.gather_wait += now - rk.wait_start;
        nodes_[static_cast<std::size_t>(rk.task_node)].end = rk.wait_start;
        const PipelineOp op = nodes_[static_cast<std::size_t>(rk.task_node)].op;
        rk.task_node = add_node(PathNode::Kind::kTask, rk, req.node);
        nodes_.back().op = op;
        layer_compute(k);
      }
      maybe_start_optimizer(k, req.node);
    }
    pump(s, req.node);
  }

  // The optimizer runs once the rank's tasks are done and every collective it issued (and every
  // bucket it will issue) has completed.
  void maybe_start_optimizer(int k, std::int64_t trigger) {
    Rank& rk = rank(k);
    const Stage& st = stage_of(rk);
    if (rk.optimizer_started || rk.next < st.ops.size() || rk.buckets_issued < st.buckets.size()) return;
    if (rk.issued > 0 && !st.requests[rk.issued - 1].done) return;
    const des::Tick now = engine_.now();
    rk.optimizer_start = now;
    rk.optimizer_started = true;
    rk.optimizer_node = add_node(PathNode::Kind::kOptimizer, rk, trigger);
    const des::Tick opt = des::to_ticks(spec_->optimizer * rk.factor + spec_->post_optimizer);
    if (trace_) span(k, now, now + opt, "optimizer");
    timers_.at(now + opt, tag(Kind::kOptimizerDone, k, 0));
  }

  void span(int track, des::Tick start, des::Tick end, std::string name) {
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
    r.step_time = des::to_seconds(rk.finish);
    r.critical_stage = rk.stage;
    r.breakdown.compute = des::to_seconds(rk.compute);
    r.breakdown.tp_comm = des::to_seconds(rk.tensor);
    r.breakdown.gather_wait = des::to_seconds(rk.gather_wait);
    r.breakdown.bubble = des::to_seconds(rk.last_compute_end - rk.compute - rk.tensor - rk.gather_wait);
    r.breakdown.dp_exposed = des::to_seconds(rk.optimizer_start - rk.last_compute_end);
    r.breakdown.optimizer = des::to_seconds(rk.finish - rk.optimizer_start);
    r.critical_path = critical_path(nodes_, rk.optimizer_node, replicas_ > 1);
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
  std::vector<std::int64_t> fwd_send_;  // the send node that filled each ready cell
  std::vector<std::int64_t> bwd_send_;
  std::vector<PathNode> nodes_;
  std::vector<TransferPattern> to_next_;
  std::vector<TransferPattern> to_prev_;
  std::vector<CollectiveSchedule> schedules_;
  std::vector<std::string> tracks_;
  std::vector<TraceSpan> spans_;
};

}  // namespace

StepResult simulate_step(const topology::Topology& topo, const StepSpec& spec, const Perturbation& perturbation,
                         bool record_trace) {
  STEPCAST_ASSERT(spec.pp >= 1 && spec.tp >= 1 && spec.dp >= 1 && spec.vp >= 1 && spec.micro_batches >= 1 && spec.layers >= 1,
                  "a step needs positive degrees, micro-batches and layers");
  STEPCAST_ASSERT(!spec.tensor_parallel || (spec.tensor_parallel->forward_slices >= 1 && spec.tensor_parallel->backward_slices >= 1),
                  "a layer has at least one slice");
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
