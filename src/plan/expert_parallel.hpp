// Private: the expert-parallel settings of a plan (ep=, etp=, moe-dispatcher=, capacity-factor=,
// moe-imbalance=, moe-overlap=, moe-fused-mlp=): parsing them, the rules they must keep, and their compact form.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan_builder.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

/// Applies `key` when it is an expert setting and returns true; false for any other key.
bool set_expert_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail);

/// Appends every expert-parallel rule the resolved plan breaks, with its numbers.
void add_expert_problems(const Plan& plan, const workload::Workload& workload, std::vector<Verdict>& out);

/// ",ep=8,etp=1,moe-dispatcher=alltoall,..." for a plan with expert settings; "" otherwise.
std::string expert_settings_text(const Plan& plan);

}  // namespace stepcast::plan
