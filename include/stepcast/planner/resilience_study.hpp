// A resilience study of a plan: checkpoint size and write/restore time, the optimal checkpoint
// interval for a failure or preemption rate (Young 1974, Daly 2006) and the goodput it yields,
// the restore under another plan, stragglers and the input-pipeline bound. The inputs are typed
// and checked; `stepcast resilience` (report/resilience_command) parses them from its options.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/checkpoint.hpp"
#include "stepcast/cost/failure.hpp"
#include "stepcast/cost/input_pipeline.hpp"
#include "stepcast/cost/straggler.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::planner {

/// Exactly one failure rate: one node's MTBF, failures per GPU-hour, or spot interruptions per node-hour.
struct FailureRate {
  std::optional<Seconds> node_mtbf;
  double per_gpu_hour = 0.0;
  double spot_per_node_hour = 0.0;
};

struct ResilienceInputs {
  cost::StorageTier tier;
  FailureRate failures;
  Seconds relaunch;                           ///< before the restore read
  std::optional<cost::AsyncStaging> staging;  ///< --async: staged in host memory
  cost::CheckpointOptions checkpoint;
  std::optional<plan::Plan> restored_plan;  ///< resolved and validated
  std::optional<Seconds> step_time;         ///< given or predicted; none: no stragglers or input bound
  std::string step_time_origin;
  double step_cv = 0.0;
  double slow_probability = 0.0;
  double slow_factor = 2.0;
  std::optional<BytesPerSecond> input_bandwidth;
  double decode_rate = 0.0;  ///< samples/s one node decodes; 0: not a limit
  double token_bytes = 0.0;  ///< 0: from the vocabulary
};

struct FailureSource {
  Seconds job_mtbf;
  std::string formula;
};

struct ResilienceStudy {
  cost::CheckpointSize size;
  /// peft=lora: the frozen base weights each rank reads at a restore besides the checkpoint, which
  /// holds the adapters' state alone (Megatron-Bridge's PEFT checkpoints); zero otherwise.
  Bytes frozen_base_per_rank;
  cost::StorageTier tier;
  cost::TransferTime write;
  cost::TransferTime restore;
  cost::CheckpointStall stall;
  Seconds relaunch;
  Seconds restart;  // relaunch + restore
  FailureSource failures;
  Seconds young;
  Seconds daly;
  Seconds interval;  // Daly's, or the background write time when that is longer
  std::string interval_note;
  cost::GoodputBreakdown at_interval;
  std::vector<cost::GoodputBreakdown> curve;
  std::optional<plan::Plan> restored_plan;
  std::optional<cost::RestoreReads> reshard;
  std::optional<cost::TransferTime> reshard_ranged;
  std::optional<cost::TransferTime> reshard_whole;
  std::optional<Seconds> step_time;
  std::string step_time_origin;
  std::optional<cost::StragglerEstimate> normal;
  std::optional<cost::StragglerEstimate> lognormal;
  std::optional<cost::StragglerEstimate> slow;
  std::optional<cost::InputPipelineBound> input;
  std::string input_note;
};

/// The study of `plan` (resolved) on `topology`; bad combinations throw InputError.
ResilienceStudy study_resilience(const workload::Workload& workload, const plan::Plan& plan,
                                 const topology::Topology& topology, const ResilienceInputs& inputs);

/// "1.5 h (5400 s)"-style: a duration with its hours, as the study's formulas print them.
std::string hours(Seconds t);

}  // namespace stepcast::planner
