// Private: layers kept in bf16 under a low-precision plan (bf16-first-layers=, bf16-last-layers=):
// the rules Megatron-Core sets on them (their sentences: rule_text.hpp).
#pragma once

#include <vector>

#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

/// Appends every rule the plan's bf16 layers break, with its numbers.
void add_bf16_layer_problems(const Plan& plan, const workload::Workload& workload, std::vector<Verdict>& out);

}  // namespace stepcast::plan
