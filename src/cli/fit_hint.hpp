// What to try when a plan does not fit in GPU memory, printed under "Fits: NO".
#pragma once

#include <string>

#include "stepcast/cost/memory.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::cli {

/// Lines suggesting the plan settings that shrink the largest memory term (empty when none
/// applies): stored attention scores, activations without recompute, unsharded model state.
std::string fit_hint(const plan::Plan& plan, const cost::MemoryBreakdown& memory);

}  // namespace stepcast::cli
