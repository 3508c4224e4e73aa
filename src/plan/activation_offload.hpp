// Private: activation offload to host memory (offload-layers=): the rules Megatron-Core sets on it
// (their sentences: rule_text.hpp).
#pragma once

#include <vector>

#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

/// Appends every rule the plan's activation offload breaks, with its numbers.
void add_offload_problems(const Plan& plan, const workload::Workload& workload, std::vector<Verdict>& out);

}  // namespace stepcast::plan
