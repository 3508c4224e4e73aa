// The analytical step-time predictor: compute + exposed communication + pipeline bubble +
// optimizer step, with tokens/s, MFU and the memory of each GPU; every term explainable.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::cost {

struct StepOptions {
  MemoryOptions memory;
  /// Replaces the default achieved fraction of peak (compute.cpp); wins over `calibration`.
  std::optional<double> achieved_fraction;
  /// Measured tier figures and compute fractions from `stepcast calibrate` (not owned; may be
  /// null): every collective of the step is priced on the calibrated tiers.
  const Calibration* calibration = nullptr;
  /// Fill the explanations (off in the planner's inner loop, where formatting would dominate).
  bool explain = true;
};

/// Which group of ranks a collective runs on. Ranks are placed tensor-parallel first
/// (consecutive GPUs), then pipeline (stride tp), then data parallel (stride tp*pp).
enum class CommGroup { kTensor, kPipeline, kData, kShardGroup, kReplicaGroup };

/// One kind of collective of the step, with how often it runs and how much of it is exposed.
struct CommTerm {
  std::string name;  ///< "TP all-reduce", "FSDP all-gather (forward)", ...
  CollectiveOp op = CollectiveOp::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  CommGroup group = CommGroup::kData;
  int ranks = 1;
  int stride = 1;   ///< GPU index distance between consecutive ranks of the group
  Bytes size;       ///< nccl-tests' S of one call
  double calls = 0; ///< per step (fractional for a partial last bucket)
  Seconds time;     ///< all calls, as if nothing overlapped
  Seconds exposed;  ///< the part that adds to the step time
};

struct StepPrediction {
  Seconds step_time;               ///< compute + bubble + exposed communication + optimizer
  Seconds compute;                 ///< bubble-free compute of one GPU
  Seconds bubble;
  Seconds exposed_communication;   ///< sum of CommTerm::exposed
  Seconds optimizer;               ///< the optimizer update (memory-bound)
  double layers_per_stage = 0.0;   ///< transformer layers of one pipeline stage (all its chunks)
  double bubble_fraction = 0.0;
  double tokens_per_s = 0.0;
  double mfu = 0.0;                ///< model FLOPs / (step time x GPUs x peak)
  ComputeEstimate compute_detail;
  std::vector<CommTerm> communication;
  MemoryBreakdown memory;
  MemoryFit fit;                   ///< against the topology's GPU memory
  Explanation explanation;         ///< the step-time terms (memory and compute have their own)
};

/// Predicts one training step. Preconditions: the plan is resolved and valid for this workload
/// and topology (plan::validate), the workload has a shape, and the GPU has a peak rate for
/// the plan's precision. Collective times come from estimate_collective on topology.tiers().
StepPrediction predict_step(const workload::Workload& workload, const plan::Plan& plan, const topology::Topology& topology,
                            const StepOptions& options = {});

std::string_view to_string(CommGroup group);

}  // namespace stepcast::cost
