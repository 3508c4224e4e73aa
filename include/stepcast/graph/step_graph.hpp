// The step graph: one training step of a plan as typed compute and communication nodes, each
// communication node with its placement in the step. One contributor per parallel dimension adds
// its nodes (contributors.hpp); both engines evaluate the same graph, the analytical one in closed
// form (analytical.hpp) and the discrete-event one on the network (sim/step_sim.hpp). The engines
// act on a node's anchor and figures alone: a name is for people.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/compute.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::graph {

/// Where a communication node's calls sit in the step.
enum class Anchor {
  /// After each compute slice of every layer pass, in node order; the next slice waits for them.
  kAfterSlice,
  /// With each compute slice of every layer pass; the slice ends when both have, plus the `tail`
  /// share of the calls that nothing hides.
  kBesideSlice,
  /// At the start of a layer pass, `per_layer` times; `join` says what waits for them.
  kLayerStart,
  /// On the stage's stream, issued when the layer before starts computing (the first layer's at
  /// the pass's start); the layer waits for it.
  kLayerPrefetch,
  /// On the stage's stream when a layer's backward ends (its gradients are complete).
  kLayerEnd,
  /// On the stage's stream in `pieces` buckets, ready as the gradient tasks produce their bytes.
  kGradientReady,
  /// On the stage's stream after the optimizer, in one call; the step ends when it does.
  kAfterOptimizer,
  /// On the stage's stream at the step's start, in `pieces` buckets; the first task waits for the
  /// first bucket, the second for them all.
  kStepStart,
  /// After each task, from its model chunk to the next (forward) or the previous (backward).
  kStageSend
};

/// kLayerStart: what waits for the calls.
enum class Join {
  kBeforeCompute,  ///< the layer's compute: the calls bring what it needs
  kFirstSlice,     ///< the end of the layer's first slice, beside which they run
  kLayerEnd        ///< the end of the layer's compute, beside which they run
};

/// kLayerStart and kLayerPrefetch: the passes of a layer that run the calls.
enum class Pass {
  kForward,
  kBackward,
  /// The forward, and again at the start of the backward pass, where recompute repeats the forward
  /// (the contributor says which recompute does).
  kForwardAndRecompute
};

/// What the analytical engine hides a kLayerStart node that runs beside compute behind.
enum class Window {
  kLayerPass,       ///< the layer pass's compute
  kAttentionSteps,  ///< the layer's attention, split in `window_steps` steps, one beside each call (a ring)
  kNothing,         ///< nothing: the compute waits for it where it runs (a ring's last, returning hop)
};

/// The GPUs one collective of a node runs on, at one pipeline stage: every group that runs it at
/// once (one per position of the other dimensions), each in ring order.
using GroupSets = std::vector<std::vector<int>>;

/// Which groups of a stage the simulator plays when one rank stands for its data-parallel
/// replicas: the groups its own replicas form, or every group of the stage (whose traffic meets
/// on shared links: the NICs).
enum class Representation { kOwnReplicas, kEveryGroup };

/// A kind of group of ranks a plan communicates on.
struct GroupSpec {
  std::string role;  ///< identifier of the kind ("tensor", "data", ...), named by its contributor
  /// The group as the collective model prices it: ranks, GPU stride between them, and the groups
  /// of its kind beside it that share the NICs (topology::Topology::tiers).
  int ranks = 1;
  int stride = 1;
  topology::Concurrency concurrency;
  Representation representation = Representation::kOwnReplicas;
  /// Every group of this kind at a stage (the simulator's and the trace's; built on demand).
  std::function<GroupSets(int stage)> members;
};

/// One collective (or send) of the step, with its placement.
struct CommNode {
  std::string name;       ///< for people: "TP all-gather (sequence parallel)"
  std::size_t group = 0;  ///< into StepGraph::groups
  cost::CollectiveOp op = cost::CollectiveOp::kAllReduce;
  Bytes size;  ///< nccl-tests' S of one call
  Anchor anchor = Anchor::kAfterSlice;
  // Layer anchors (kLayerStart, kLayerPrefetch, kLayerEnd).
  Pass pass = Pass::kForward;
  /// Calls of the node one after another in a round (a ring's steps).
  int layer_calls = 1;
  /// Rounds per layer pass by model chunk (index stage x vp + chunk) and layer of it (an MoE
  /// block's calls, once per block in the layer: some layers have none); empty: one round in
  /// every layer. The nodes of an anchor run round by round, each round in node order.
  std::vector<std::vector<int>> per_layer;
  /// kLayerPrefetch: issued when the layer before ends instead of when it starts, ahead of its
  /// kLayerEnd calls, so nothing of the layer before hides it (PyTorch FSDP's BACKWARD_POST).
  bool after_layer = false;
  /// kLayerPrefetch, kLayerEnd: what the first layer of the first model chunk moves beyond `size`
  /// (the parameters outside the layers, the embeddings).
  Bytes root;
  Join join = Join::kBeforeCompute;
  Window window = Window::kLayerPass;
  /// Window::kAttentionSteps: the steps the layer's attention runs in, one beside each call.
  int window_steps = 1;
  /// kBesideSlice: the share of the calls that nothing hides (the first chunk gathered or the last
  /// reduced of a decomposed collective).
  double tail = 0.0;
  // Stream anchors (kGradientReady, kAfterOptimizer, kStepStart).
  /// Calls per step (per micro-batch with every_micro_batch); a fractional last one is smaller.
  double pieces = 1.0;
  /// kGradientReady: reduced every micro-batch (ZeRO-2) rather than once per step.
  bool every_micro_batch = false;
  /// kGradientReady: reduced while the backward runs; false: all after the last gradient task.
  bool overlapped = true;
  /// kStageSend: the sender waits for the transfer before its next task.
  bool blocking = true;
};

/// One pipeline stage's compute for one micro-batch.
struct StageWork {
  Seconds forward;      ///< all model chunks
  Seconds backward;     ///< with any recomputed forward
  Seconds weight_grad;  ///< the weight-gradient part of `backward` (ZB-H1 runs it as its own task)
  /// Each model chunk's share, and its layers (transformer layers and MTP modules; a chunk that
  /// holds only the embedding or the loss has none).
  std::vector<cost::ChunkCompute> chunks;

  /// Layer passes a task of the chunk runs: its layers, at least one (an empty chunk's one pass
  /// holds its compute and no calls).
  [[nodiscard]] int passes(int chunk) const;
  /// Layers of all its chunks.
  [[nodiscard]] int layers() const;
};

/// Where a GPU sits: tensor rank, pipeline stage and replica (data x context parallel), tensor
/// ranks innermost and, as plan::RankOrder says, the stages outermost (Megatron-Core's default:
/// a stage's GPUs contiguous) or inside each replica.
struct Layout {
  int tp = 1;
  int pp = 1;
  int replicas = 1;  ///< dp x cp: the ranks that hold the same weights
  bool stages_outermost = true;
  [[nodiscard]] int gpu(int replica, int stage, int tp_rank) const {
    return (stages_outermost ? stage * replicas + replica : replica * pp + stage) * tp + tp_rank;
  }
  [[nodiscard]] int replica_of(int gpu) const { return stages_outermost ? (gpu / tp) % replicas : gpu / (tp * pp); }
  [[nodiscard]] int stage_of(int gpu) const { return stages_outermost ? gpu / (tp * replicas) : (gpu / tp) % pp; }
  /// GPUs between consecutive replicas of a stage, and between consecutive stages of a replica.
  [[nodiscard]] int replica_stride() const { return stages_outermost ? tp : tp * pp; }
  [[nodiscard]] int stage_stride() const { return stages_outermost ? tp * replicas : tp; }
  [[nodiscard]] int gpus() const { return tp * pp * replicas; }
};

/// The step of one plan.
struct StepGraph {
  Layout layout;
  plan::Schedule schedule = plan::Schedule::k1F1B;
  int micro_batches = 1;
  int vp = 1;  ///< model chunks per stage
  /// A layer pass's compute in equal slices, between which kAfterSlice / kBesideSlice calls sit.
  int forward_slices = 1;
  int backward_slices = 1;
  std::vector<StageWork> stages;
  Seconds optimizer;
  /// The operator model's answer the stages come from (the analytical engine's report reads it).
  cost::ComputeEstimate compute;
  std::vector<GroupSpec> groups;
  std::vector<CommNode> comm;

  /// Adds a group kind and returns its index.
  std::size_t add_group(GroupSpec spec);
  /// Rounds of `node` in layer pass `layer` of model chunk `chunk` at `stage` (none past the
  /// chunk's layers).
  [[nodiscard]] int rounds_at(const CommNode& node, int stage, int chunk, int layer) const;
  /// Its calls there: rounds x layer_calls.
  [[nodiscard]] int calls_at(const CommNode& node, int stage, int chunk, int layer) const {
    return rounds_at(node, stage, chunk, layer) * node.layer_calls;
  }
};

/// Backward slices of a layer: the forward's again when full recompute repeats it (Narayanan et
/// al. 2021, section 3.5; Shoeybi et al. 2019, Figure 4).
int backward_slices(const plan::Plan& plan, int forward_slices);

}  // namespace stepcast::graph
