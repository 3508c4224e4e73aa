// One simulated step (private to sim/): the ranks' compute streams, the stages' data-parallel
// comm streams, the network, and the dependencies recorded for the critical path. Built in
// step_run_build.cpp, run in step_run.cpp, summed up in step_sim.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "step_graph.hpp"
#include "stepcast/des/engine.hpp"
#include "stepcast/des/timer_model.hpp"
#include "stepcast/sim/collective_flows.hpp"
#include "stepcast/sim/network.hpp"
#include "stepcast/sim/pipeline_order.hpp"
#include "stepcast/sim/step_sim.hpp"

namespace stepcast::sim::detail {

// Timer payloads and network tags: kind in the top byte, owner in the next 24 bits (the simulated
// rank, or the stage for its data-parallel comm stream), index below.
enum class Kind : std::uint64_t {
  kSliceDone = 1,
  kBucketReady = 2,
  kOptimizerDone = 3,
  kSend = 4,
  kStreamDone = 5,
  kTensorDone = 6,
  kOverlapTail = 7,
  kContextDone = 8,
  kExpertDone = 9
};
inline std::uint64_t tag(Kind k, int owner, std::uint32_t index) {
  return (static_cast<std::uint64_t>(k) << 56) | (static_cast<std::uint64_t>(owner) << 32) | index;
}
inline Kind kind_of(std::uint64_t t) { return static_cast<Kind>(t >> 56); }
inline int owner_of(std::uint64_t t) { return static_cast<int>((t >> 32) & 0xFFFFFF); }
inline std::uint32_t index_of(std::uint64_t t) { return static_cast<std::uint32_t>(t); }

// A standard normal draw from raw generator bits (Box-Muller), so the sequence is the same on
// every standard library (std::normal_distribution's algorithm is implementation-defined).
double standard_normal(std::mt19937_64& rng);

// A compute factor never drops below this: a normal draw far in its left tail would otherwise
// make a task take no time or negative time.
constexpr double kMinFactor = 0.05;

struct Bucket {
  std::uint32_t schedule = 0;   // index into StepRun::schedules_
  std::size_t grad_op = 0;      // index into Stage::ops of the task that produces its gradients
  double ready_fraction = 1.0;  // ... and how far through that task they are complete
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
  // MoE with expert parallel: one block's routed experts over the expert data-parallel group (-1: none).
  std::int64_t expert_gather = -1;
  std::int64_t expert_reduce_scatter = -1;
};

// A stage's task order and its data-parallel comm stream, shared by its simulated replicas: the
// collectives span the replicas.
struct Stage {
  std::vector<PipelineOp> ops;
  std::vector<std::size_t> grad_ops;  // tasks that produce weight gradients, in order; the last completes them
  std::vector<Bucket> buckets;        // in the order they become ready: by grad_op, then ready_fraction
  ShardSchedules shard;
  std::int64_t updated_gather = -1;            // schedule of ZeRO's gather after the optimizer, if any
  std::vector<std::uint32_t> forward_gathers;  // overlap-param-gather=on: its buckets' schedules, in order
  std::int64_t expert_updated_gather = -1;     // ... of the experts' parameters over the expert data-parallel group
  std::vector<int> expert_blocks;              // MoE blocks in each layer of a task (one model chunk's pass)
  std::vector<Request> requests;               // in issue order
  std::size_t next_request = 0;                // the first not started
  bool comm_busy = false;
  des::Tick comm_start = 0;
};

// One simulated rank: a stage of one data-parallel replica, standing for its tensor-parallel peers
// (and for all replicas when only one is simulated).
struct Rank {
  int stage = 0;
  int replica = 0;
  double factor = 1.0;                          // step-level slowdown of the slowest GPU it stands for
  std::vector<std::uint32_t> tensor_schedules;  // one per TensorParallelComm::ops
  std::size_t next = 0;                         // task
  bool busy = false;
  // The task in progress: layers and slices done, its noise, the gathers it waits for.
  int layer = 0;
  int slice = 0;
  std::size_t tensor_op = 0;
  double task_factor = 1.0;
  des::Tick task_start = 0;
  des::Tick tensor_start = 0;
  des::Tick tensor_op_start = 0;
  // tp-overlap: the slice's compute and its collectives run side by side; the slice goes on when
  // both are done and one chunk of the collectives more has passed.
  bool overlapping = false;
  bool slice_compute_done = false;
  bool slice_comm_done = false;
  des::Tick slice_compute_end = 0;
  std::int64_t gather = -1;    // request of the current layer's gather
  std::int64_t prefetch = -1;  // request of the next layer's gather
  bool waiting = false;
  des::Tick wait_start = 0;
  std::int64_t send_wait = -1;    // the send node a non-interleaved schedule waits for, if any
  std::size_t issued = 0;         // requests issued on the stage's stream
  std::size_t buckets_timed = 0;  // buckets whose ready time is set: they come in Stage::buckets order
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
  std::int64_t updated_gather = -1;  // request of ZeRO's gather after the optimizer
  // overlap-param-gather=on: requests of the first and the last bucket gathered before the
  // first and the second task.
  std::int64_t first_bucket_gather = -1;
  std::int64_t last_bucket_gather = -1;
  std::int64_t end_node = -1;  // the node whose end ends the rank's step
  // Context parallel: the layer pass's exchange, its schedules, and whether the compute waits.
  std::vector<std::uint32_t> context_forward;
  std::vector<std::uint32_t> context_backward;
  std::size_t context_op = 0;
  bool context_started = false;  // for the current layer
  bool context_running = false;
  bool context_blocking = false;  // the slice's compute waits for it to start
  bool context_waiting = false;   // the slice's compute is done and waits for it to end
  des::Tick context_start = 0;
  des::Tick context_wait_start = 0;
  des::Tick context = 0;  // compute stream waiting on it
  // Expert parallel: one MoE block's calls per pass, their schedules, and the current layer's run.
  std::vector<std::uint32_t> expert_forward;
  std::vector<std::uint32_t> expert_backward;
  std::size_t expert_op = 0;     // calls done in the current layer
  std::size_t expert_calls = 0;  // calls of the current layer: its blocks x one block's calls
  bool expert_started = false;   // for the current layer
  bool expert_running = false;
  bool expert_blocking = false;  // the layer's compute waits for them to end before it starts
  bool expert_waiting = false;   // the layer's compute is done and waits for them (moe-overlap)
  des::Tick expert_start = 0;
  des::Tick expert_wait_start = 0;
  des::Tick expert = 0;  // compute stream waiting on them
};

class StepRun final : public des::TimerHandler, public TransferObserver, public CollectiveObserver {
 public:
  StepRun(const topology::Topology& topo, const StepSpec& spec, const Perturbation& pert, bool trace);
  StepResult run();
  void on_timer(des::Tick now, std::uint64_t payload) override;
  void on_transfer_done(des::Tick now, std::uint64_t t) override;
  void on_collective_done(des::Tick now, std::uint64_t t) override;

 private:
  int virtual_stages() const { return spec_->pp * spec_->vp; }
  int rank_count() const { return spec_->pp * replicas_; }
  int rank_index(int replica, int stage) const { return replica * spec_->pp + stage; }
  // Trace tracks: each rank's compute, its tensor-parallel collectives (with TP), each stage's
  // data-parallel comm stream, the link tiers, then each rank's pipeline sends.
  int tensor_track(int k) const { return rank_count() + k; }
  bool comm_tracks() const { return spec_->tensor_parallel || spec_->context_parallel || spec_->expert_parallel; }
  int stream_track(int s) const { return rank_count() * (comm_tracks() ? 2 : 1) + s; }
  int tier_track(topology::LinkTier tier) const { return stream_track(spec_->pp) + static_cast<int>(tier); }
  int send_track(int k) const { return tier_track(topology::LinkTier::kFabric) + 1 + k; }
  Rank& rank(int k) { return ranks_[static_cast<std::size_t>(k)]; }
  Stage& stage_of(const Rank& rk) { return stages_[static_cast<std::size_t>(rk.stage)]; }
  const PipelineOp& op_of(Rank& rk) { return stage_of(rk).ops[rk.next]; }
  int gpu(int replica, int stage, int tp_rank) const {
    return replica * spec_->stride_dp + stage * spec_->stride_pp + tp_rank;
  }
  std::size_t ready_index(int replica, int vs, int mb) const {
    return (static_cast<std::size_t>(replica) * static_cast<std::size_t>(virtual_stages()) +
            static_cast<std::size_t>(vs)) *
               static_cast<std::size_t>(spec_->micro_batches) +
           static_cast<std::size_t>(mb);
  }

  // Each GPU's step factor is its slowdown times, under step noise, a Normal(1, step_cv) draw
  // (drawn in replica, stage, tensor-rank order). A rank runs at the pace of the slowest GPU it
  // stands for: its tensor-parallel peers wait for it inside every layer, and when one rank
  // stands for every replica, they wait for it at every bucket.
  void place_ranks(const Perturbation& pert);
  std::uint32_t add_schedule(cost::CollectiveOp op, Bytes size, std::span<const std::vector<int>> groups);
  void build();
  // One group per tensor-parallel rank: the stage's GPUs of that rank in every replica.
  std::vector<std::vector<int>> data_parallel_groups(int s) const;

  // Buckets of every gradient sync, in order; bucket j of all syncs becomes ready when the
  // cumulative bytes up to it have been produced by the last gradient task (evenly over its compute).
  void build_buckets(int s);

  // Shard groups are consecutive data-parallel replicas; HYBRID_SHARD's replica groups take one
  // rank of each shard group (PyTorch FSDP's device mesh: shard dimension innermost).
  void build_shards(int s);
  bool ready(const Rank& rk, const PipelineOp& op) const;
  // overlap-param-gather=on: whether the parameters the rank's next task needs are gathered.
  bool parameters_here(const Rank& rk) const;
  void build_forward_gathers(int s);
  double task_noise();

  // Tasks run layer by layer only when something happens between layers or inside them.
  int layers_of(const PipelineOp& op) const;
  int slices_of(const PipelineOp& op) const;
  Seconds work_of(const PipelineOp& op, int stage) const;
  bool gathers_before(const PipelineOp& op) const;
  // Schedule variant of the layer at position `pos` of the task: the model chunk's first layer
  // carries the root parameters (first in the forward, last in the backward).
  std::size_t variant(const PipelineOp& op, int pos) const;
  // Issues the gathers of layer `pos` of the task: its dense unit, then the routed experts of each
  // MoE block it holds; returns the last request (the stream runs them in order).
  std::int64_t issue_layer_gathers(int k, const PipelineOp& op, int pos);
  // The MoE blocks of layer `pos` of the task (a backward meets the layers in reverse order).
  int expert_blocks_at(int stage, const PipelineOp& op, int pos) const;

  // Starts the rank's next task if its input is there; `trigger` is the node whose end called.
  void try_start(int k, std::int64_t trigger);
  std::int64_t add_node(PathNode::Kind kind, const Rank& rk, std::int64_t pred);
  void layer_begin(int k);

  // The layer's parameters are here: prefetch the next layer's, then compute.
  void layer_compute(int k);
  void start_slice(int k);
  void slice_done(int k);
  void tensor_done(int k, des::Tick now);
  // tp-overlap: both halves of the slice are done; wait the chunk nothing hides, then go on.
  void overlap_tail(int k, des::Tick now);
  void slice_end(int k);
  // Context parallel: starts the layer pass's exchange when the layer's first slice starts.
  bool context_due(const Rank& rk, const PipelineOp& op) const;
  void start_context(int k);
  void context_done(int k, des::Tick now);
  void build_context(int k);
  // Expert parallel (moe_blocks.cpp): the stage's expert-parallel, expert-TP and expert
  // data-parallel groups as Megatron-core folds its GPUs, each rank's schedules, and the MoE
  // blocks of each layer; the calls run at the start of a layer that has MoE blocks.
  std::vector<std::vector<int>> expert_groups(int s, bool expert_tp) const;
  std::vector<std::vector<int>> expert_data_groups(int s) const;
  void build_expert(int k);
  void build_expert_stage(int s);
  bool expert_due(const Rank& rk, const PipelineOp& op) const;
  void start_expert(int k);
  void expert_done(int k, des::Tick now);
  void task_done(int k, des::Tick now);
  // The rank's next task, or its optimizer once its tasks are done.
  void go_on(int k, std::int64_t trigger);
  std::int64_t add_send(const Rank& rk, const PipelineOp& op, int to_virtual_stage);

  // Appends (or joins) the next collective of the rank's stage stream; returns its index.
  // `trigger` is the node that issues it: the rank's current task unless given.
  std::int64_t issue(int k, RequestKind kind, std::uint32_t schedule, std::int64_t trigger);
  std::int64_t issue(int k, RequestKind kind, std::uint32_t schedule) {
    return issue(k, kind, schedule, rank(k).task_node);
  }

  // Starts the stream's next collective if the stream is free and every replica has issued it;
  // `trigger` is the node whose end called (an issuing task, or the previous collective).
  void pump(int s, std::int64_t trigger);
  void stream_done(int s, std::uint32_t i, des::Tick now);

  // The optimizer runs once the rank's tasks are done and every collective it issued (and every
  // bucket it will issue) has completed.
  void maybe_start_optimizer(int k, std::int64_t trigger);
  // The rank's step ends with the optimizer, or under ZeRO-1/2 with the gather it then issues.
  void optimizer_done(int k, des::Tick now);
  void finish(int k, des::Tick now, std::int64_t node);
  void span(int track, des::Tick start, des::Tick end, std::string name);
  StepResult result();
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

}  // namespace stepcast::sim::detail
