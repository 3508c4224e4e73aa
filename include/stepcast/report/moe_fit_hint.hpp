// The first line of an MoE plan's fit hint: how its model state splits between the routed experts
// and the dense rest, which says whether ep or tp/pp is the lever (fit_hint.hpp tries them all).
#pragma once

#include <string>

#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::report {

/// "  model state per GPU: routed experts X, dense layers Y\n".
/// Preconditions: the workload has an MoE shape; the plan is resolved and valid.
std::string moe_fit_hint(const plan::Plan& plan, const workload::Workload& workload);

}  // namespace stepcast::report
