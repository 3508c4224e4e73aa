// The fine-tuning a search or table tries every plan with (--peft, --lora-rank, --lora-targets):
// the plan keys peft=, lora-rank= and lora-targets= as command options.
#pragma once

#include <string>

#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::report {

struct FineTuningOptions {
  std::string peft;          ///< --peft: "lora" or "none"; empty: not given
  int lora_rank = 0;         ///< --lora-rank (0: not given)
  std::string lora_targets;  ///< --lora-targets, '+'-joined (empty: not given)
};

/// Sets `base`'s fine-tuning from the options, each read as its plan key is. An InputError naming
/// the option for a value the key refuses, for --lora-rank or --lora-targets without --peft lora,
/// and for LoRA on a `workload` (where given) no plan could adapt: every plan would break the rule.
void set_fine_tuning(plan::Plan& base, const FineTuningOptions& options, const workload::Workload* workload = nullptr);

/// Gives `family` (a table's --plan) the base plan's fine-tuning where it states none of its own.
void inherit_fine_tuning(plan::Plan& family, const plan::Plan& base);

/// " --peft lora --lora-rank 16 --lora-targets qkv": the options as the reproducing command line
/// writes them ("" where none was given).
std::string fine_tuning_arguments(const FineTuningOptions& options);

/// The note a search or table prints under its batch line for LoRA plans ("" otherwise).
std::string fine_tuning_note(const plan::Plan& base);

}  // namespace stepcast::report
