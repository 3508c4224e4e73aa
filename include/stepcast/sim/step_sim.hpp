// One training step as a task graph on the event engine: forward and backward tasks per
// micro-batch (and model chunk) on each pipeline stage's compute stream in the order of the
// pipeline schedule, activations and gradients sent between stages as network flows, gradient
// buckets all-reduced over the data-parallel group as flows while backward runs, the optimizer
// step, and ZeRO's gather of the updated parameters after it. One representative rank per stage stands for its tensor-
// and data-parallel peers, which the plan makes symmetric; their traffic is in the flows. With
// per-step noise the replicas are no longer symmetric, so every data-parallel replica's stages run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::sim {

/// A gradient synchronisation over the data-parallel group, in buckets launched as the last
/// micro-batch's backward produces them (PyTorch DDP, Li et al. 2020, section 3.2).
struct GradientSync {
  std::string name;
  cost::CollectiveOp op = cost::CollectiveOp::kAllReduce;
  Bytes bucket;          ///< size of a full bucket (nccl-tests' S of one call)
  double buckets = 0.0;  ///< buckets per step; a fractional last bucket is smaller
  /// ZeRO-2 reduces every micro-batch's gradients: an equal share of the buckets becomes ready
  /// through each gradient-producing task, not all of them through the last one (DDP, ZeRO-1).
  bool every_micro_batch = false;
  /// overlap-grad-reduce=off: every bucket waits for the end of the last gradient task.
  bool overlapped = true;
  /// MoE: the routed experts' gradients, reduced over the expert data-parallel groups
  /// (ExpertParallelComm) instead of the data-parallel ones.
  bool expert_data = false;
};

/// Megatron tensor parallelism inside every layer (Shoeybi et al. 2019, Figure 4): a layer's
/// compute is split into equal slices, and after each slice the rank's tensor-parallel group runs
/// `ops` in order as flows; the next slice needs their result.
struct TensorParallelComm {
  std::vector<cost::CollectiveOp> ops;  ///< {all-reduce}; {all-gather, reduce-scatter} with sequence parallel
  Bytes size;                           ///< nccl-tests' S of each call: the activation s x b x h
  int forward_slices = 2;               ///< per layer: after attention and after the MLP
  int backward_slices = 2;              ///< 4 with full recompute (the forward's two run again)
  /// tp-overlap=on: a slice's collectives start with its compute, in tp chunks, so the slice ends
  /// when both have, plus one chunk (1/tp of the collectives' time) that nothing hides.
  bool overlap = false;
  int tp = 1;
};

/// Context parallel (Megatron-Core): the messages of one layer pass over each group of cp ranks
/// (the cp data-parallel replicas beside each other, plan.hpp), one entry per call, in order.
struct ContextParallelComm {
  int cp = 1;
  std::vector<std::pair<cost::CollectiveOp, Bytes>> forward;
  std::vector<std::pair<cost::CollectiveOp, Bytes>> backward;  ///< with the forward's again under recompute
  /// The ring (cp-comm=p2p) runs beside the layer's first slice, which holds its attention, and
  /// the slice ends when both have; all-gather and all-to-all run before the slice, which waits.
  bool beside_compute = true;
};

/// One collective of an MoE block: on the expert-parallel group (dispatch, combine) or on the
/// expert tensor-parallel group (the dispatched rows gathered before the experts, scattered after).
struct ExpertCall {
  cost::CollectiveOp op = cost::CollectiveOp::kAllToAll;
  Bytes size;  ///< nccl-tests' S of the call, already stretched by the busiest rank's load factor
  bool expert_tp = false;
};

/// Expert parallel (Megatron-core's MoE layers, "parallel folding"): a stage's tp x dp GPUs, in
/// dense order (replica-major, tensor rank inside), fold as etp x ep x edp, etp innermost. Every
/// MoE block of a task's layers runs its calls in order; without overlap the layer's compute
/// waits for them (they sit between dependent kernels), with moe-overlap=on they run beside the
/// layer's compute and the layer ends when both have.
struct ExpertParallelComm {
  int ep = 1;
  int etp = 1;
  std::vector<ExpertCall> forward;   ///< one MoE block's forward pass
  std::vector<ExpertCall> backward;  ///< its backward pass, with the forward's again under full recompute
  std::vector<double> stage_blocks;  ///< MoE blocks per stage, all model chunks (the MTP modules on the last)
  bool beside_compute = false;       ///< moe-overlap=on
  /// ZeRO-1/2: S of the experts' updated-parameter all-gather over the expert data-parallel
  /// group after the optimizer (0 without).
  Bytes parameter_gather;
  /// FSDP / ZeRO-3 (ShardedLayers): S of one MoE block's routed-expert all-gather and gradient
  /// reduce-scatter over the expert data-parallel group, issued on the stage's data-parallel
  /// stream right after its layer's dense unit's (0 without: the experts ride in the dense unit).
  Bytes shard_gather;
  Bytes shard_reduce_scatter;
};

/// FSDP / ZeRO-3 (Zhao et al. 2023, PyTorch FSDP, section 3.3): before a layer's forward (and,
/// unless parameters are kept, its backward) its parameters are all-gathered over the shard
/// group; when a layer starts computing, the next layer's gather is issued (prefetch); when a
/// layer's backward ends, its gradients are reduce-scattered (HYBRID_SHARD then all-reduces
/// each shard over the replicas). All run in issue order on the stage's data-parallel comm stream.
struct ShardedLayers {
  Bytes gather;               ///< S of one layer's all-gather (its parameters, gathered)
  Bytes reduce_scatter;       ///< S of one layer's gradient reduce-scatter
  Bytes replica_all_reduce;   ///< HYBRID_SHARD: S of one layer's all-reduce over the replicas; 0 without
  Bytes root_gather;          ///< parameters outside the layers (embeddings), gathered with the first layer
  Bytes root_reduce_scatter;  ///< their gradients, reduce-scattered with the first layer's
  Bytes root_replica_all_reduce;
  bool regather = true;  ///< FULL_SHARD and ZeRO-3 gather again for the backward
  int shard_ranks = 1;   ///< data-parallel ranks of one shard group (consecutive replicas)
};

/// Everything the step graph needs, in plain figures, so tests can state them by hand.
struct StepSpec {
  int pp = 1;
  int tp = 1;
  int dp = 1;
  int vp = 1;  ///< model chunks per stage (interleaved 1F1B)
  int micro_batches = 1;
  int layers = 1;  ///< layers of one model chunk of one stage
  plan::Schedule schedule = plan::Schedule::k1F1B;
  Seconds forward;   ///< one micro-batch, all chunks, one stage, compute only
  Seconds backward;  ///< idem; under ZB-H1 split into input and weight gradients
  /// Per stage, when stages differ (the first runs the embedding, the last the output layer and
  /// loss); empty: `forward` and `backward` on every stage.
  std::vector<Seconds> stage_forward;
  std::vector<Seconds> stage_backward;
  double weight_grad_share = 0.5;  ///< ZB-H1: the weight-gradient part of the backward
  std::optional<TensorParallelComm> tensor_parallel;
  std::optional<ShardedLayers> sharded;
  std::optional<ContextParallelComm> context_parallel;
  std::optional<ExpertParallelComm> expert_parallel;
  Bytes p2p_bytes;                  ///< activation (or gradient) bytes per GPU per send between stages
  std::vector<GradientSync> syncs;  ///< run in order on the data-parallel comm stream
  Seconds optimizer;
  /// ZeRO-1/2: S of the all-gather of the updated parameters over the data-parallel group, run on
  /// the stage's comm stream after the optimizer; the step ends when it does. 0 without.
  Bytes parameter_gather;
  /// overlap-param-gather=on: the gather runs instead at the step's start, in buckets of this
  /// size (the last one smaller), beside the first forward task, which waits for the first
  /// bucket; the task after it waits for them all (Megatron-LM's distributed optimizer).
  Bytes parameter_gather_bucket;
  bool parameter_gather_before_forward = false;
  int stride_pp = 1;  ///< GPU distance between stages (tp)
  int stride_dp = 1;  ///< GPU distance between data-parallel replicas (tp*pp)
  /// How every collective is priced before it becomes flows (NCCL's pick, calibration): the
  /// analytical step's model (cost/collective_model.hpp).
  cost::CollectiveModel model;
};

/// Per-GPU slowdown and noise.
struct Perturbation {
  std::optional<int> slow_gpu;   ///< this GPU's compute runs `slowdown` times longer
  std::optional<int> slow_node;  ///< every GPU of this node does
  double slowdown = 1.0;
  double noise_cv = 0.0;  ///< per-task coefficient of variation of compute time
  /// Per-GPU, per-step coefficient of variation: each GPU draws one factor ~ Normal(1, step_cv)
  /// that stretches all its compute in the step. Above 0, every data-parallel replica is
  /// simulated, so the gradient synchronisation waits for the slowest.
  double step_cv = 0.0;
  std::uint64_t seed = 1;
};

/// One interval of a track, for the trace.
struct TraceSpan {
  int track = 0;  ///< index into StepResult::tracks
  double start_s = 0.0;
  double end_s = 0.0;
  std::string name;
};

struct StepBreakdown {
  Seconds compute;         ///< compute tasks of the critical rank
  Seconds tp_comm;         ///< tensor-parallel collectives between its slices of compute
  Seconds bubble;          ///< its compute stream idle (pipeline, sends) before its last task ends
  Seconds gather_wait;     ///< its compute stream waiting for FSDP/ZeRO-3 parameter gathers
  Seconds cp_comm;         ///< its compute stream waiting for the context-parallel exchange
  Seconds moe_comm;        ///< its compute stream waiting for MoE dispatch, combine and expert-TP collectives
  Seconds dp_exposed;      ///< gradient communication after its last task
  Seconds optimizer;       ///< optimizer plus the ZeRO parameter all-gather after it
  Seconds straggler_wait;  ///< step time minus the same step without slowdown or noise
};

struct StepResult {
  Seconds step_time;
  StepBreakdown breakdown;
  int critical_stage = 0;
  std::vector<std::string> critical_path;  ///< the critical stage's tasks, in order, abridged
  std::vector<double> tier_utilization;    ///< indexed by LinkTier: bytes / (capacity x step)
  std::vector<std::string> tracks;
  std::vector<TraceSpan> spans;
  std::uint64_t events = 0;
  int simulated_ranks = 0;            ///< one per stage, times the data-parallel degree under step noise
  std::vector<Seconds> rank_compute;  ///< compute of each simulated rank, index replica * pp + stage
};

/// Runs one step of `spec` on `topo`. With a perturbation, also runs the unperturbed step to
/// measure the wait on stragglers. A simulated rank runs at the pace of the slowest GPU it
/// stands for (its tensor-parallel peers wait for it inside every layer). Preconditions: pp*tp*dp <= GPUs;
/// micro_batches >= 1; under interleaving micro_batches is a multiple of pp.
StepResult simulate_step(const topology::Topology& topo, const StepSpec& spec, const Perturbation& perturbation = {},
                         bool record_trace = false);

}  // namespace stepcast::sim
