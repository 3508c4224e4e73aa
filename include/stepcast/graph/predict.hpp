// The analytical step-time predictor: the plan's step graph evaluated in closed form. Step time =
// compute + pipeline bubble + exposed communication + optimizer step, with tokens/s, MFU and the
// memory of each GPU; every term explainable.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/graph/analytical.hpp"
#include "stepcast/graph/step_graph.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::graph {

/// The compute estimate of the last plan a thread priced, kept for the next plan that differs only
/// in settings the compute model does not read (rank order, tp-overlap, the DDP/ZeRO overlap
/// flags): the planner enumerates those variants side by side. One per thread; the answers are
/// the same with or without it.
struct ComputeCache {
  std::string key;
  std::optional<cost::ComputeEstimate> estimate;
};

struct StepOptions {
  cost::MemoryOptions memory;
  /// Replaces the default achieved fraction of peak (compute.cpp); wins over `calibration`.
  std::optional<double> achieved_fraction;
  /// Measured tier figures and compute fractions from `stepcast calibrate` (not owned; may be
  /// null): every collective of the step is priced on the calibrated tiers.
  const cost::Calibration* calibration = nullptr;
  /// Fill the explanations (off in the planner's inner loop, where formatting would dominate).
  bool explain = true;
  /// Collective prices remembered across predictions on one topology and calibration (not
  /// owned; may be null; one per thread): the planner's inner loop.
  PriceCache* price_cache = nullptr;
  /// Not owned; may be null; used only without explanations.
  ComputeCache* compute_cache = nullptr;
};

/// The step graph of a resolved, valid plan, its compute from the operator model (or the
/// options' achieved fraction and calibration). Preconditions as for predict_step.
StepGraph plan_step_graph(const workload::Workload& workload, const plan::Plan& plan,
                          const topology::Topology& topology, const StepOptions& options = {});

struct StepPrediction {
  Seconds step_time;  ///< compute + bubble + exposed communication + optimizer
  Seconds compute;    ///< bubble-free compute of one GPU, with what the collectives beside it take
  /// The part of `compute` lost to the collectives that run beside it (slow_compute_beside_calls).
  Seconds compute_beside_collectives;
  Seconds bubble;
  Seconds exposed_communication;  ///< sum of CommTerm::exposed
  Seconds optimizer;              ///< the optimizer update (memory-bound)
  double bubble_fraction = 0.0;
  double tokens_per_s = 0.0;
  double mfu = 0.0;  ///< model FLOPs / (step time x GPUs x peak)
  cost::ComputeEstimate compute_detail;
  std::vector<CommTerm> communication;  ///< one per node of the step graph, in node order
  cost::MemoryBreakdown memory;
  cost::MemoryFit fit;      ///< against the topology's GPU memory
  Explanation explanation;  ///< the step-time terms (memory and compute have their own)
};

/// Predicts one training step. Preconditions: the plan is resolved and valid for this workload
/// and topology (plan::validate), the workload has a shape, and the GPU has a peak rate for
/// the plan's precision.
StepPrediction predict_step(const workload::Workload& workload, const plan::Plan& plan,
                            const topology::Topology& topology, const StepOptions& options = {});

/// The analytical evaluation of a step graph built for `plan` (predict_step after plan_step_graph).
StepPrediction evaluate_step(const StepGraph& graph, const workload::Workload& workload, const plan::Plan& plan,
                             const topology::Topology& topology, const StepOptions& options = {});

}  // namespace stepcast::graph
