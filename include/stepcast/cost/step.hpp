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
#include "stepcast/cost/step_communication.hpp"
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
  /// Collective prices remembered across predictions on one topology and calibration (not
  /// owned; may be null; one per thread): the planner's inner loop.
  StepCommunicationCache* communication_cache = nullptr;
};

struct StepPrediction {
  Seconds step_time;  ///< compute + bubble + exposed communication + optimizer
  Seconds compute;    ///< bubble-free compute of one GPU
  Seconds bubble;
  Seconds exposed_communication;  ///< sum of CommTerm::exposed
  Seconds optimizer;              ///< the optimizer update (memory-bound)
  double layers_per_stage = 0.0;  ///< transformer layers of one pipeline stage (all its chunks)
  double bubble_fraction = 0.0;
  double tokens_per_s = 0.0;
  double mfu = 0.0;  ///< model FLOPs / (step time x GPUs x peak)
  ComputeEstimate compute_detail;
  std::vector<CommTerm> communication;
  MemoryBreakdown memory;
  MemoryFit fit;            ///< against the topology's GPU memory
  Explanation explanation;  ///< the step-time terms (memory and compute have their own)
};

/// Predicts one training step. Preconditions: the plan is resolved and valid for this workload
/// and topology (plan::validate), the workload has a shape, and the GPU has a peak rate for
/// the plan's precision. Collective times come from estimate_collective on topology.tiers().
StepPrediction predict_step(const workload::Workload& workload, const plan::Plan& plan,
                            const topology::Topology& topology, const StepOptions& options = {});

}  // namespace stepcast::cost
