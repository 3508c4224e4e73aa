// Private: when the data-parallel gradient reduction and the sharded optimizer's parameter
// gather run beside compute (overlap-grad-reduce=, overlap-param-gather=): parsing them, the
// rules they must keep, and their compact form.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan_builder.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

/// Applies `key` when it is an overlap setting and returns true; false for any other key.
bool set_overlap_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail);

/// Appends every rule the resolved plan's overlap settings break, with its numbers.
void add_overlap_problems(const Plan& plan, std::vector<Verdict>& out);

/// ",overlap-grad-reduce=off,overlap-param-gather=on" for the settings given; "" otherwise.
std::string overlap_settings_text(const Plan& plan);

}  // namespace stepcast::plan
