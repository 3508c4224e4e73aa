// The fine-tuning options of search and table, read by the plan's own key parser so that an option
// takes exactly the values its plan key takes.
#include "stepcast/report/fine_tuning.hpp"

#include <fmt/format.h>

#include <vector>

#include "stepcast/core/errors.hpp"

namespace stepcast::report {

void set_fine_tuning(plan::Plan& base, const FineTuningOptions& o, const workload::Workload* workload) {
  if (!o.peft.empty()) base.peft = plan::parse_plan("peft=" + o.peft, "--peft").peft;
  const bool lora = base.peft == plan::Peft::kLora;
  if (o.lora_rank > 0) {
    if (!lora) throw InputError("--lora-rank", {}, "needs --peft lora: the rank is the LoRA adapters' inner size");
    base.lora_rank = plan::parse_plan(fmt::format("lora-rank={}", o.lora_rank), "--lora-rank").lora_rank;
    base.lora_rank_given = true;
  }
  if (!o.lora_targets.empty()) {
    if (!lora) {
      throw InputError("--lora-targets", {},
                       "needs --peft lora: the targets are the layers LoRA adapters are added to");
    }
    base.lora_targets = plan::parse_plan("lora-targets=" + o.lora_targets, "--lora-targets").lora_targets;
    base.lora_targets_given = true;
  }
  if (workload == nullptr) return;
  std::vector<plan::Verdict> refused;
  plan::fine_tuning_workload_problems(base, *workload, refused);
  if (!refused.empty()) throw InputError("--peft", {}, plan::invalid_plan_message(refused));
}

void inherit_fine_tuning(plan::Plan& family, const plan::Plan& base) {
  if (family.peft != plan::Peft::kNone || family.lora_rank_given || family.lora_targets_given) return;
  family.peft = base.peft;
  family.lora_rank = base.lora_rank;
  family.lora_rank_given = base.lora_rank_given;
  family.lora_targets = base.lora_targets;
  family.lora_targets_given = base.lora_targets_given;
}

std::string fine_tuning_arguments(const FineTuningOptions& o) {
  std::string s;
  if (!o.peft.empty()) s += " --peft " + o.peft;
  if (o.lora_rank > 0) s += fmt::format(" --lora-rank {}", o.lora_rank);
  if (!o.lora_targets.empty()) s += " --lora-targets " + o.lora_targets;
  return s;
}

std::string fine_tuning_note(const plan::Plan& base) {
  if (base.peft != plan::Peft::kLora) return {};
  return fmt::format(
      "every plan trains LoRA adapters of rank {} on {} beside frozen weights (peft=lora); plans that shard the "
      "weights (FSDP, zero=3) are not modelled with it",
      base.lora_rank, plan::lora_targets_text(base.lora_targets));
}

}  // namespace stepcast::report
