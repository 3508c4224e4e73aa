// An MoE plan's part of the step graph, from its analytical prediction (private to sim/).
#pragma once

#include <optional>

#include "stepcast/cost/step.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/sim/step_sim.hpp"

namespace stepcast::sim::detail {

/// The expert-parallel part of the step graph: one MoE block's calls per pass, from the
/// prediction's MoE terms (same sizes, so both engines move the same bytes), and the MoE blocks
/// of each stage from the compute model. None for a plan without MoE collectives.
std::optional<ExpertParallelComm> expert_parallel_comm(const plan::Plan& plan, const cost::StepPrediction& prediction);

}  // namespace stepcast::sim::detail
