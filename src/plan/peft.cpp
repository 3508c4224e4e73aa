// LoRA (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language Models") as Megatron-Bridge
// runs it (docs/training/peft.md): the base model's weights are frozen, and every linear layer of
// the transformer blocks (linear_qkv, linear_proj, linear_fc1, linear_fc2: the default target
// modules) gains two trained matrices of rank `dim`, 32 by default; target_modules may name fewer
// (lora-targets=), or add a hybrid's Mamba-2 in_proj and out_proj (Megatron-Bridge's Nemotron-H
// recipes). Only the adapters have gradients, optimizer state and a data-parallel reduction.
#include "peft.hpp"

#include <fmt/format.h>

#include "name_bits.hpp"
#include "rule_text.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::plan {

namespace {

/// The largest rank accepted: far above any published LoRA (8-256), and small enough that the
/// adapter GEMMs' arithmetic stays exact in double.
constexpr int kMaxLoraRank = 65536;

/// Megatron-Bridge's target_modules, as lora-targets= names them.
constexpr NameBit kTargetNames[] = {{kLoraQkv, "qkv"}, {kLoraProj, "proj"},      {kLoraFc1, "fc1"},
                                    {kLoraFc2, "fc2"}, {kLoraInProj, "in_proj"}, {kLoraOutProj, "out_proj"}};

}  // namespace

std::string lora_targets_text(unsigned targets) { return name_bits_text(kTargetNames, targets); }

bool set_peft_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail) {
  if (key == "peft") {
    if (value == "lora") {
      plan.peft = Peft::kLora;
    } else if (value == "none") {
      plan.peft = Peft::kNone;
    } else {
      fail(fmt::format("peft= expects lora or none, got \"{}\"", value));
    }
  } else if (key == "lora-rank") {
    plan.lora_rank = parse_positive(key, value, fail);
    if (plan.lora_rank > kMaxLoraRank) fail(fmt::format("lora-rank= is at most {}, got {}", kMaxLoraRank, value));
    plan.lora_rank_given = true;
  } else if (key == "lora-targets") {
    plan.lora_targets = parse_name_bits(
        kTargetNames, key, value,
        [value](std::string_view) {
          return fmt::format("lora-targets= expects qkv, proj, fc1, fc2, in_proj and out_proj joined by +, got \"{}\"",
                             value);
        },
        fail);
    plan.lora_targets_given = true;
  } else {
    return false;
  }
  return true;
}

void add_peft_problems(const Plan& p, const workload::Workload& workload, std::vector<Verdict>& out) {
  if (p.peft != Peft::kLora) {
    if (p.lora_rank_given) out.push_back({Rule::kLoraRankNeedsLora, {{"rank", p.lora_rank}}});
    if (p.lora_targets_given)
      out.push_back({Rule::kLoraTargetsNeedLora, {{"targets", lora_targets_text(p.lora_targets)}}});
    return;
  }
  // Megatron-Bridge applies the adapters before the distributed wrapping, so its DDP and
  // distributed optimizer hold the adapters alone; how a sharded-weight framework gathers frozen
  // weights beside trained ones, and how routed experts carry adapters, stepcast does not model.
  if (p.zero_stage() == 3) {
    out.push_back({Rule::kLoraWithShardedWeights, {{"sharding", std::string(p.is_fsdp() ? "FSDP" : "zero=3")}}});
  }
  fine_tuning_workload_problems(p, workload, out);
}

void fine_tuning_workload_problems(const Plan& p, const workload::Workload& workload, std::vector<Verdict>& out) {
  if (p.peft != Peft::kLora) return;
  if (!workload.shape) out.push_back({Rule::kLoraNeedsShape, {{"workload", workload.name}}});
  if (workload.shape && workload.shape->moe) {
    out.push_back({Rule::kLoraWithRoutedExperts, {{"workload", workload.name}}});
  }
  if ((p.lora_targets & kLoraMambaTargets) != 0 && !(workload.shape && workload.shape->has_mamba_layers())) {
    out.push_back({Rule::kLoraMambaTargetsNeedMamba,
                   {{"targets", lora_targets_text(p.lora_targets & kLoraMambaTargets)}, {"workload", workload.name}}});
  }
}

std::string describe_peft(const Verdict& v) {
  switch (v.rule) {
    case Rule::kLoraRankNeedsLora:
      return fmt::format("lora-rank={} needs peft=lora: the rank is the adapters' inner size", v.number("rank"));
    case Rule::kLoraTargetsNeedLora:
      return fmt::format("lora-targets={} needs peft=lora: the targets are the layers adapters are added to",
                         v.text("targets"));
    case Rule::kLoraWithShardedWeights:
      return fmt::format(
          "peft=lora with {} is not modelled: stepcast prices LoRA as Megatron-Bridge runs it, frozen weights "
          "replicated over dp and the adapters under DDP or the distributed optimizer (zero=0, 1 or 2)",
          v.text("sharding"));
    case Rule::kLoraNeedsShape:
      return fmt::format(
          "peft=lora needs the model's layer shapes to size its adapters; {} gives a parameter count only",
          v.text("workload"));
    case Rule::kLoraWithRoutedExperts:
      return fmt::format(
          "peft=lora with routed experts ({}) is not modelled: stepcast's adapters cover dense transformer "
          "layers only",
          v.text("workload"));
    case Rule::kLoraMambaTargetsNeedMamba:
      return fmt::format("lora-targets= names {} (a Mamba-2 mixer's projections); {} has no Mamba-2 layer",
                         v.text("targets"), v.text("workload"));
    default:
      STEPCAST_UNREACHABLE("a rule of the fine-tuning settings");
  }
}

std::string peft_settings_text(const Plan& p) {
  std::string text = p.peft == Peft::kLora ? ",peft=lora" : "";
  if (p.lora_rank_given) text += fmt::format(",lora-rank={}", p.lora_rank);
  if (p.lora_targets_given) text += ",lora-targets=" + lora_targets_text(p.lora_targets);
  return text;
}

}  // namespace stepcast::plan
