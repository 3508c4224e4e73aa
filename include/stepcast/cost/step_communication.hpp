// The communication of one training step: every collective a plan runs (tensor, pipeline and
// data parallel), how often, and how much of it the compute leaves exposed. The compute side of
// the step hands in the windows the communication can hide behind.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::cost {

/// Which group of ranks a collective runs on. Ranks are placed tensor-parallel first
/// (consecutive GPUs), then pipeline (stride tp), then data parallel (stride tp*pp).
/// Context-parallel ranks sit between pipeline and data parallel (stride tp*pp). MoE plans add the
/// expert-parallel group (dispatch and combine) and the expert data-parallel group (the routed
/// experts' gradients), and under FSDP / ZeRO-3 with expert parallel the expert shard group (the
/// expert data-parallel ranks, over which each block's routed experts are gathered and their
/// gradients reduce-scattered).
enum class CommGroup {
  kTensor,
  kPipeline,
  kData,
  kShardGroup,
  kReplicaGroup,
  kContext,
  kExpert,
  kExpertData,
  kExpertShardGroup
};

/// One kind of collective of the step, with how often it runs and how much of it is exposed.
struct CommTerm {
  std::string name;  ///< "TP all-reduce", "FSDP all-gather (forward)", ...
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::string model;  ///< what priced a full-size call: NCCL's pick ("ring/Simple") or a closed form
  CommGroup group = CommGroup::kData;
  int ranks = 1;
  int stride = 1;    ///< GPU index distance between consecutive ranks of the group
  Bytes size;        ///< nccl-tests' S of one call
  double calls = 0;  ///< per step (fractional for a partial last bucket)
  Seconds time;      ///< all calls, as if nothing overlapped
  Seconds exposed;   ///< the part that adds to the step time
  /// Its full-size calls lie outside the range the calibration was fitted on (an extrapolation).
  bool outside_calibration = false;
  /// Context-parallel exchange only: calls per layer pass and micro-batch, and whether it
  /// belongs to the backward (the simulator replays it layer by layer).
  double context_calls = 0.0;
  bool context_backward = false;
  /// MoE dispatch, combine and expert-TP terms only: calls per MoE block in one forward pass and
  /// in one backward pass (without recompute's), and whether they run on the expert-TP group
  /// rather than the expert-parallel one (the simulator replays them block by block).
  double moe_forward_calls = 0.0;
  double moe_backward_calls = 0.0;
  bool moe_expert_tp = false;
  /// MoE terms only: the group stays inside one node, so its calls leave the NICs free.
  bool moe_inside_node = false;
};

/// What the communication can hide behind, from the compute side of the step (one GPU).
struct ComputeWindows {
  Seconds forward;                ///< compute of one micro-batch's forward pass over the stage's layers
  Seconds backward;               ///< ... of its backward pass (with any recomputed forward)
  int micro_batches = 1;          ///< per step and pipeline
  double layers_per_stage = 0.0;  ///< transformer layers of one pipeline stage (all its chunks)
  /// The fused attention of one layer and micro-batch, forward and backward: what the
  /// context-parallel ring hides its transfers behind (zero: nothing hidden).
  Seconds attention_forward;
  Seconds attention_backward;
};

/// Collectives priced for one topology and calibration, remembered by group shape, collective
/// and size: the planner prices the same collectives for thousands of plans. The answers are
/// the same with or without it. Not thread-safe: one per thread.
class StepCommunicationCache {
 public:
  struct Priced {
    Seconds time;
    std::string model;
    bool outside_calibration = false;
  };
  using GroupKey = std::tuple<int, int, int, int>;      // ranks, stride, concurrent groups, their offset
  std::optional<std::optional<NcclHardware>> hardware;  // read once; the inner none: a GPU NCCL does not know
  std::map<GroupKey, CollectiveGroup> groups;
  std::map<std::tuple<GroupKey, int, double>, Priced> prices;  // group, collective, size in bytes
};

/// What communication options the step needs (the planner turns explanations off).
struct CommunicationOptions {
  /// DDP's bucket (bucket_cap_mb) and DeepSpeed's reduce_bucket_size, as the memory model has them.
  Bytes ddp_bucket;
  double zero_bucket_elements = 0.0;
  /// Measured tier figures from `stepcast calibrate` (not owned; may be null).
  const Calibration* calibration = nullptr;
  /// Remembered prices for this topology and calibration (not owned; may be null).
  StepCommunicationCache* cache = nullptr;
};

/// The step's collectives, their total and exposed time, and the tensor-parallel part (which
/// the pipeline bubble scales with).
struct StepCommunication {
  std::vector<CommTerm> terms;
  Seconds exposed;  ///< sum of CommTerm::exposed
  Seconds tensor;   ///< all tensor-parallel collectives (all exposed)
  /// The context-parallel exchange, step by step, for --explain (empty without cp).
  Explanation context;
};

/// The collectives of one step of `plan`. Preconditions as for predict_step.
StepCommunication step_communication(const workload::Workload& workload, const plan::Plan& plan,
                                     const topology::Topology& topology, const ComputeWindows& windows,
                                     const CommunicationOptions& options);

std::string_view to_string(CommGroup group);

}  // namespace stepcast::cost
