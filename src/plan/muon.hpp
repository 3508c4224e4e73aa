// Private: the rules optimizer=muon keeps.
#pragma once

#include <vector>

#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

/// Appends every rule an optimizer=muon plan breaks, with its numbers.
void add_muon_problems(const Plan& plan, const workload::Workload& workload, std::vector<Verdict>& out);

}  // namespace stepcast::plan
