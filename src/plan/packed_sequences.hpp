// Private: sequences packed from shorter documents (doc-len=): parsing the key, the rules it
// must keep, and its compact form.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan_builder.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

/// Applies `key` when it is the packing setting and returns true; false for any other key.
bool set_packing_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail);

/// Appends every rule the resolved plan's packing breaks, with its numbers.
void add_packing_problems(const Plan& plan, std::vector<Verdict>& out);

/// ",doc-len=256" for a packed plan; "" otherwise.
std::string packing_settings_text(const Plan& plan);

}  // namespace stepcast::plan
