// The largest batch, sequence and micro-batch count a plan takes: far beyond every published training run, and small
// enough that tokens, activations and FLOPs computed from them stay finite and every count an int.
#pragma once

#include <string>
#include <vector>

#include "stepcast/plan/plan.hpp"

namespace stepcast::plan::detail {

/// Appends to `out` each limit the (resolved) plan goes beyond, with the numbers and the limit.
void limit_problems(const Plan& plan, std::vector<Verdict>& out);

}  // namespace stepcast::plan::detail
