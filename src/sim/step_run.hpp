// One simulated step (private to sim/): the ranks' compute streams with their call lanes, the
// stages' data-parallel streams, the network, and the dependencies recorded for the critical path.
// It knows anchors, never parallel dimensions: every node of the graph is played by where it sits.
// Built in step_run_build.cpp; tasks, layers and slices in step_run.cpp; lanes and rendezvous in
// step_run_lanes.cpp; the stage streams in step_run_stream.cpp; summed up in step_sim.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "critical_path.hpp"
#include "stepcast/des/engine.hpp"
#include "stepcast/des/timer_model.hpp"
#include "stepcast/sim/collective_flows.hpp"
#include "stepcast/sim/network.hpp"
#include "stepcast/sim/pipeline_order.hpp"
#include "stepcast/sim/step_sim.hpp"

namespace stepcast::sim::detail {

using graph::GroupSets;

// Timer payloads and network tags: kind in the top byte, owner in the next 24 bits (the simulated
// rank, or the stage for its data-parallel stream), index below.
enum class Kind : std::uint64_t {
  kSliceDone = 1,
  kBucketReady = 2,
  kOptimizerDone = 3,
  kSend = 4,
  kStreamDone = 5,
  kCallDone = 6,
  kOverlapTail = 7
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

// One group kind at one stage as the simulation plays it: its groups in components, each the
// groups whose ranks belong to the same simulated ranks (one rendezvous plays them together).
struct GroupRun {
  std::vector<GroupSets> components;
  std::vector<int> component_of_replica;  // simulated replica -> component, -1: none of its own
  std::vector<int> ranks_of_component;    // simulated ranks that reach each component's calls
};

// A call a stage plays: one node of the graph at one size (a layer's unit with the root
// parameters is its own slot). Each rank resolves a slot to the schedule of its component.
struct Slot {
  std::uint32_t node = 0;
  Bytes size;
  int blocks = -1;  // NCCL's thread blocks (SMs) a call holds while it runs; -1: not priced yet
};

// The calls of one layer pass, by lane, as slots in the order they run.
enum Lane : std::size_t { kBlockingLane = 0, kFirstSliceLane = 1, kLayerEndLane = 2, kSliceLane = 3, kLanes = 4 };

struct LayerProgram {
  std::array<std::vector<std::uint32_t>, 3> lanes;  // blocking, first slice, layer end
  std::vector<std::uint32_t> gathers;               // kLayerPrefetch, issued for this layer
  bool late_gathers = false;              // issued as the layer before ends, ahead of its reductions (after_layer)
  std::vector<std::uint32_t> reductions;  // kLayerEnd (backward only)
};

struct Bucket {
  std::uint32_t slot = 0;
  std::size_t grad_op = 0;      // index into Stage::ops of the task that produces its gradients
  double ready_fraction = 1.0;  // ... and how far through that task they are complete
};

// A collective on a stage's data-parallel stream. Every simulated replica issues the same
// sequence, so the i-th request of each is the same collective; it starts when all have issued it.
struct Request {
  std::uint32_t slot = 0;
  int issued = 0;
  bool done = false;
  std::int64_t node = -1;  // in StepRun::nodes_, once started
};

// A stage's task order, its programs and its data-parallel stream, shared by its simulated
// replicas: the stream's collectives span them.
struct Stage {
  std::vector<PipelineOp> ops;
  std::vector<std::size_t> grad_ops;  // tasks that produce weight gradients, in order; the last completes them
  std::vector<Slot> slots;
  std::vector<GroupRun> groups;  // by graph group, built on first use (empty components: not yet)
  // [model chunk][pass: forward, backward][layer of the chunk, in the model's order]; the first
  // layer of the first chunk has its own program when root parameters ride with it.
  std::vector<std::array<std::vector<LayerProgram>, 2>> layers;
  std::array<LayerProgram, 2> root_layer;
  bool has_root = false;
  // moe-overlap: the tasks with no task of the other pass to pair with (the forwards before the
  // stage's first backward, the backwards after its last forward) run the calls the others hide
  // beside a layer before it instead; their programs are otherwise the same.
  std::vector<bool> alone;
  std::vector<std::array<std::vector<LayerProgram>, 2>> layers_alone;
  std::array<LayerProgram, 2> root_layer_alone;
  std::vector<std::uint32_t> after_slice;   // slots, every slice of every pass
  std::vector<std::uint32_t> beside_slice;  // slots, beside every slice
  double tail = 0.0;                        // share of the beside-slice calls nothing hides
  std::vector<Bucket> buckets;              // in the order they become ready
  std::vector<std::uint32_t> after_optimizer;
  std::vector<std::vector<std::uint32_t>> step_start;  // by model chunk, its buckets' slots in order
  std::uint32_t send_slot = 0;
  bool has_send = false;
  des::Tick send_delay = 0;  // without contention: the send's price
  bool blocking_send = true;
  std::vector<Request> requests;  // in issue order
  std::size_t next_request = 0;   // the first not started
  bool comm_busy = false;
  des::Tick comm_start = 0;
};

// A call lane of one rank: calls run one after another; the compute may wait on them.
struct LaneState {
  const std::vector<std::uint32_t>* slots = nullptr;
  std::size_t next = 0;
  bool running = false;
  bool compute_waiting = false;  // the compute is done (or blocked) and waits for the lane's end
  des::Tick start = 0;           // of the lane
  des::Tick call_start = 0;      // of its current call
  des::Tick wait_start = 0;
  des::Tick end = 0;  // of the lane, once done
};

// One simulated rank: a stage of one replica, standing for its tensor-parallel peers (and for all
// replicas when only one is simulated).
struct Rank {
  int stage = 0;
  int replica = 0;
  double factor = 1.0;                     // step-level slowdown of the slowest GPU it stands for
  std::vector<std::uint32_t> schedule_of;  // slot -> schedule of its component
  std::vector<std::uint32_t> occurrences;  // slot -> calls of it this rank has reached
  std::vector<int> expected;               // slot -> simulated ranks that reach each of its calls
  std::size_t next = 0;                    // task
  bool busy = false;
  // The task in progress: layers and slices done, its noise, the gathers it waits for.
  int layer = 0;
  int slice = 0;
  double task_factor = 1.0;
  des::Tick task_start = 0;
  const LayerProgram* program = nullptr;  // the current layer's
  std::array<LaneState, kLanes> lanes;
  bool layer_lanes_started = false;
  bool overlapping = false;  // the slice's compute and its beside-slice calls run side by side
  // The slice's compute runs on the SMs the collectives running on this rank leave it
  // (cost::sm_share): its timer moves whenever they start or end.
  int held_blocks = 0;  // thread blocks of the collectives running on this rank
  bool slice_running = false;
  des::EventHandle slice_timer;
  des::Tick slice_start = 0;
  des::Tick slice_since = 0;  // when its rate last changed
  double slice_left = 0.0;    // its work not yet done, in ticks at the full rate
  bool slice_compute_done = false;
  des::Tick slice_compute_end = 0;
  std::int64_t gather = -1;    // request of the current layer's last gather
  std::int64_t prefetch = -1;  // request of the next layer's last gather
  bool gather_waiting = false;
  des::Tick wait_start = 0;
  std::int64_t send_wait = -1;    // the send node a blocking schedule waits for, if any
  std::size_t issued = 0;         // requests issued on the stage's stream
  std::size_t buckets_timed = 0;  // buckets whose ready time is set: they come in Stage::buckets order
  std::size_t buckets_issued = 0;
  // Accounting.
  des::Tick last_compute_end = 0;
  des::Tick finish = 0;
  des::Tick compute = 0;
  std::vector<des::Tick> waits;  // by graph node: the compute stream waiting on its calls
  des::Tick optimizer_start = 0;
  bool optimizer_started = false;
  std::int64_t task_node = -1;  // the latest node of the task in progress (or the last task)
  std::int64_t optimizer_node = -1;
  std::int64_t last_updated_gather = -1;  // request of the last gather after the optimizer
  // The step-start gathers: the request of the first bucket (the first task waits for it) and of
  // each model chunk's last (the chunk's later tasks wait for it; -1: none), chunks issued so far.
  std::int64_t first_bucket_gather = -1;
  std::vector<std::int64_t> chunk_gather;
  int chunks_gathered = 0;
  std::int64_t end_node = -1;  // the node whose end ends the rank's step
};

// A call that several simulated ranks reach: it starts when all have, and tells each when done.
struct Rendezvous {
  std::uint32_t schedule = 0;
  int expected = 1;
  std::vector<std::pair<int, Lane>> waiters;  // rank, lane
};

class StepRun final : public des::TimerHandler, public TransferObserver, public CollectiveObserver {
 public:
  StepRun(const topology::Topology& topo, const graph::StepGraph& graph, const SimOptions& options,
          const Perturbation& perturbation, bool trace);
  StepResult run();
  void on_timer(des::Tick now, std::uint64_t payload) override;
  void on_transfer_done(des::Tick now, std::uint64_t t) override;
  void on_collective_done(des::Tick now, std::uint64_t t) override;

 private:
  [[nodiscard]] int pp() const { return graph_->layout.pp; }
  [[nodiscard]] int virtual_stages() const { return pp() * graph_->vp; }
  [[nodiscard]] int rank_count() const { return pp() * replicas_; }
  [[nodiscard]] int rank_index(int replica, int stage) const { return replica * pp() + stage; }
  // Trace tracks: each rank's compute, its call lanes (when the graph has calls inside layers),
  // each stage's data-parallel stream, the link tiers, then each rank's pipeline sends.
  [[nodiscard]] int lane_track(int k) const { return rank_count() + k; }
  [[nodiscard]] int stream_track(int s) const { return rank_count() * (has_layer_calls_ ? 2 : 1) + s; }
  [[nodiscard]] int tier_track(topology::LinkTier tier) const { return stream_track(pp()) + static_cast<int>(tier); }
  [[nodiscard]] int send_track(int k) const { return tier_track(topology::LinkTier::kFabric) + 1 + k; }
  Rank& rank(int k) { return ranks_[static_cast<std::size_t>(k)]; }
  Stage& stage_of(const Rank& rk) { return stages_[static_cast<std::size_t>(rk.stage)]; }
  const PipelineOp& op_of(const Rank& rk) { return stage_of(rk).ops[rk.next]; }
  [[nodiscard]] const graph::CommNode& node_of(const Stage& st, std::uint32_t slot) const {
    return graph_->comm[st.slots[slot].node];
  }
  std::size_t ready_index(int replica, int vs, int mb) const {
    return (static_cast<std::size_t>(replica) * static_cast<std::size_t>(virtual_stages()) +
            static_cast<std::size_t>(vs)) *
               static_cast<std::size_t>(graph_->micro_batches) +
           static_cast<std::size_t>(mb);
  }

  // Building (step_run_build.cpp).
  // Each GPU's step factor is its slowdown times, under step noise, a Normal(1, step_cv) draw
  // (drawn in replica, stage, tensor-rank order). A rank runs at the pace of the slowest GPU it
  // stands for.
  void place_ranks(const Perturbation& pert);
  void build();
  void build_stage(int s);
  void build_layers(int s);
  void build_alone_programs(Stage& st);
  void build_buckets(int s);
  void build_tracks();
  std::uint32_t add_slot(int s, std::size_t node, Bytes size);
  const GroupRun& group_run(int s, std::size_t group);
  // The schedule of `slot` for component `component` of its group (-1: every group of the stage).
  std::uint32_t schedule_for(int s, std::uint32_t slot, int component);
  // A call of the step: NCCL's price plus KernelParams::collective_overhead.
  cost::CollectivePrice step_price(const cost::CollectiveGroup& group, cost::CollectiveOp op, Bytes size) const;
  // Without contention: the analytical engine's price of a slot's call, as a delay.
  cost::CollectivePrice isolated_price(const Stage& st, std::uint32_t slot) const;
  void resolve_schedules(int k);

  // Tasks, layers and slices (step_run.cpp).
  bool ready(const Rank& rk, const PipelineOp& op) const;
  /// Issues the step-start gathers of the model chunks up to `last_chunk` not yet issued.
  void gather_chunks(int k, int last_chunk);
  bool parameters_here(const Rank& rk) const;
  /// The request is a step-start gather a task of the rank may wait for.
  static bool waits_on_gather(const Rank& rk, std::int64_t request);
  double task_noise();
  int layers_of(const Rank& rk, const PipelineOp& op) const;
  bool slice_calls(const Rank& rk, const PipelineOp& op) const;
  int slices_of(const PipelineOp& op) const;
  Seconds work_of(const PipelineOp& op, int stage) const;
  const LayerProgram* program_at(const Rank& rk, const PipelineOp& op, int pos) const;
  void try_start(int k, std::int64_t trigger);
  std::int64_t add_node(PathNode::Kind kind, const Rank& rk, std::int64_t pred);
  void layer_begin(int k);
  void layer_compute(int k);
  void start_slice(int k);
  void slice_done(int k);
  void slice_end(int k);
  void layer_end(int k);
  void task_done(int k, des::Tick now);
  void go_on(int k, std::int64_t trigger);
  std::int64_t add_send(const Rank& rk, const PipelineOp& op, int to_virtual_stage);

  // Call lanes and their rendezvous (step_run_lanes.cpp).
  // Starts the lane's calls; `compute_waits`: the compute stream waits on them from the start.
  void start_lane(int k, Lane lane, const std::vector<std::uint32_t>& slots, bool compute_waits = false);
  void start_call(int k, Lane lane);
  void call_done(int k, Lane lane, des::Tick now);
  void lane_done(int k, Lane lane, des::Tick now);
  void overlap_tail(int k, des::Tick now);
  void charge(Rank& rk, std::uint32_t slot, des::Tick ticks);
  // The SMs a slot's calls hold, and a change of the SMs the collectives running on rank `k` hold.
  int blocks_of(int s, std::uint32_t slot);
  void hold(int k, int blocks);
  [[nodiscard]] double slice_rate(const Rank& rk) const;
  // Times the running slice's end at the rate the SMs the collectives hold leave it.
  void time_slice_end(int k);

  // The stage streams (step_run_stream.cpp).
  std::int64_t issue(int k, std::uint32_t slot, std::int64_t trigger);
  std::int64_t issue(int k, std::uint32_t slot) { return issue(k, slot, rank(k).task_node); }
  std::int64_t issue_all(int k, const std::vector<std::uint32_t>& slots);
  void pump(int s, std::int64_t trigger);
  void stream_done(int s, std::uint32_t i, des::Tick now);
  void maybe_start_optimizer(int k, std::int64_t trigger);
  void optimizer_done(int k, des::Tick now);
  void finish(int k, des::Tick now, std::int64_t node);
  void span(int track, des::Tick start, des::Tick end, std::string name);
  StepResult result();

  const topology::Topology* topo_;
  const graph::StepGraph* graph_;
  const SimOptions* options_;
  std::mt19937_64 rng_;
  des::Engine engine_;
  des::TimerModel timers_;
  CollectiveRunner runner_;
  Network network_;
  bool trace_;
  double noise_cv_;
  int replicas_;                  // data-parallel replicas simulated: all under step noise, else one for all
  bool has_layer_calls_ = false;  // some node sits inside the layers: tasks run layer by layer
  int sm_count_ = 1;
  std::vector<Rank> ranks_;
  std::vector<Stage> stages_;
  std::vector<char> fwd_ready_;
  std::vector<char> bwd_ready_;
  std::vector<std::int64_t> fwd_send_;  // the send node that filled each ready cell
  std::vector<std::int64_t> bwd_send_;
  std::vector<PathNode> nodes_;
  std::vector<TransferPattern> to_next_;  // by rank
  std::vector<TransferPattern> to_prev_;
  std::vector<CollectiveSchedule> schedules_;
  std::map<std::tuple<int, std::uint32_t, int>, std::uint32_t> schedule_ids_;  // stage, slot, component
  std::vector<Rendezvous> rendezvous_;
  std::vector<std::uint32_t> free_rendezvous_;
  std::unordered_map<std::uint64_t, std::uint32_t> open_rendezvous_;  // schedule x occurrence -> rendezvous
  std::vector<std::string> tracks_;
  std::vector<TraceSpan> spans_;
};

}  // namespace stepcast::sim::detail
