// What to try when an MoE plan's model state does not fit, from how that state splits between
// the routed experts and the dense rest.
#pragma once

#include <string>

#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::report {

/// Lines of advice ("  try ...\n") for a plan of an MoE workload whose model state holds most of
/// its memory and does not fit: the two parts' bytes per GPU; when the routed experts dominate, a
/// larger ep (the next that divides the experts and folds the stage's GPUs) or else etp, zero=1
/// where their optimizer state is not yet sharded over edp, and pp; when the dense part does, a
/// larger tp or pp and zero=1; in both, fsdp=full where the plan does not yet shard parameters
/// (the experts' over edp, the dense layers' over dp).
/// Preconditions: the workload has an MoE shape; the plan is resolved and valid.
std::string moe_fit_hint(const plan::Plan& plan, const workload::Workload& workload);

}  // namespace stepcast::report
