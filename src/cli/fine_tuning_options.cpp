// The fine-tuning options of search and table.
#include "fine_tuning_options.hpp"

#include "option_checks.hpp"

namespace stepcast::cli {

void add_fine_tuning_options(CLI::App& command, report::FineTuningOptions& o) {
  command.add_option(
      "--peft", o.peft,
      "lora: every plan trains LoRA adapters beside frozen weights (plan key peft=); none: every weight");
  command
      .add_option("--lora-rank", o.lora_rank, "The adapters' rank with --peft lora (default 32; plan key lora-rank=)")
      ->check(positive_number());
  command.add_option("--lora-targets", o.lora_targets,
                     "The layers adapted with --peft lora, qkv, proj, fc1, fc2, in_proj and out_proj (a Mamba-2 "
                     "mixer's) joined by + (default qkv+proj+fc1+fc2; plan key lora-targets=)");
}

}  // namespace stepcast::cli
