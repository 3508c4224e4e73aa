// The step graph of a plan: the same inputs as `stepcast predict` turned into a StepSpec, with
// compute and per-call figures taken from the analytical model so that both engines start from
// one set of numbers.
#pragma once

#include <string>
#include <vector>

#include "stepcast/cost/step.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::sim {

struct PlannedStep {
  StepSpec spec;
  /// What the graph approximates, for the output (e.g. FSDP gathers added at their analytical time).
  std::vector<std::string> notes;
};

/// Builds the step graph of `plan` from its analytical prediction: per-micro-batch forward and
/// backward from the compute model (backward twice the forward, plus a forward under full
/// recompute: Narayanan et al. 2021), split into the stage's layers; TP collectives between the
/// slices of each layer, FSDP/ZeRO-3 gathers and reduce-scatters around each layer, PP sends,
/// DDP and ZeRO gradient buckets, all as flows; the optimizer step and ZeRO-1/2's parameter
/// all-gather after it, also as flows. Every collective is priced by the analytical step's model,
/// with `calibration` (not owned; may be null) applied, before it becomes flows.
PlannedStep plan_step(const plan::Plan& plan, const cost::StepPrediction& prediction,
                      const cost::Calibration* calibration = nullptr);

}  // namespace stepcast::sim
