// Private: parameter-efficient fine-tuning (peft=lora, lora-rank=, lora-targets=): parsing the keys, the rules
// they must keep, and their compact form.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan_builder.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

/// Applies `key` when it is a fine-tuning setting and returns true; false for any other key.
bool set_peft_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail);

/// Appends every rule the resolved plan's fine-tuning settings break, with its numbers.
void add_peft_problems(const Plan& plan, const workload::Workload& workload, std::vector<Verdict>& out);

/// ",peft=lora,lora-rank=16,lora-targets=qkv" for a LoRA plan ("lora-rank" and "lora-targets" only
/// where given); "" otherwise.
std::string peft_settings_text(const Plan& plan);

}  // namespace stepcast::plan
