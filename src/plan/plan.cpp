// Plans: derived degrees, the rules a plan must keep (each reported with its numbers), and the
// names of the enumerations as the command line spells them.
#include "stepcast/plan/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <utility>

#include "activation_offload.hpp"
#include "bf16_layers.hpp"
#include "data_parallel_overlap.hpp"
#include "expert_parallel.hpp"
#include "loss_settings.hpp"
#include "muon.hpp"
#include "name_bits.hpp"
#include "packed_sequences.hpp"
#include "peft.hpp"
#include "plan_limits.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::plan {

namespace {

/// Megatron-Core's names of the recompute modules, in its documentation's order.
constexpr NameBit kRecomputeModuleNames[] = {
    {kRecomputeCoreAttn, "core_attn"},
    {kRecomputeMoeAct, "moe_act"},
    {kRecomputeLayernorm, "layernorm"},
    {kRecomputeMlaUpProj, "mla_up_proj"},
    {kRecomputeMlp, "mlp"},
    {kRecomputeSharedExperts, "shared_experts"},
    {kRecomputeMoe, "moe"},
};

}  // namespace

int Plan::state_shards() const {
  switch (sharding) {
    case Sharding::kDdp:
    case Sharding::kFsdpNone:
      return 1;
    case Sharding::kFsdpHybrid:
      return shard_group > 0 ? shard_group : dp;
    case Sharding::kZero1:
    case Sharding::kZero2:
    case Sharding::kZero3:
    case Sharding::kFsdpFull:
    case Sharding::kFsdpGradOp:
      // Context-parallel ranks hold the same weights: Megatron shards its distributed optimizer
      // over the data-parallel-with-cp group.
      return dp * cp;
  }
  STEPCAST_UNREACHABLE("unknown sharding");
}

int Plan::zero_stage() const {
  switch (sharding) {
    case Sharding::kDdp:
    case Sharding::kFsdpNone:
      return 0;
    case Sharding::kZero1:
      return 1;
    case Sharding::kZero2:
    case Sharding::kFsdpGradOp:
      return 2;
    case Sharding::kZero3:
    case Sharding::kFsdpFull:
    case Sharding::kFsdpHybrid:
      return 3;
  }
  STEPCAST_UNREACHABLE("unknown sharding");
}

bool Plan::is_fsdp() const {
  return sharding == Sharding::kFsdpFull || sharding == Sharding::kFsdpGradOp || sharding == Sharding::kFsdpHybrid ||
         sharding == Sharding::kFsdpNone;
}

Plan resolve(Plan plan, const workload::Workload& workload, int gpu_count) {
  if (plan.seq_len == 0 && workload.shape) plan.seq_len = workload.shape->seq_len;
  if (plan.dp == 0) {
    const int model_parallel = plan.tp * plan.cp * plan.pp;
    if (gpu_count == 0) {
      plan.dp = plan.sharding == Sharding::kFsdpHybrid && plan.shard_group > 0 ? plan.shard_group : 1;
    } else if (gpu_count % model_parallel == 0) {
      plan.dp = gpu_count / model_parallel;
    }
    // Otherwise dp stays 0 and problems() reports the GPU count that tp*pp does not divide.
  }
  if (plan.shard_group == 0) plan.shard_group = plan.dp;
  // A derived dp can push the products past what parse_plan checked (dp was unknown there).
  const std::int64_t span = std::int64_t{plan.dp} * plan.tp * plan.cp * plan.pp * plan.vp * plan.micro_batch_size;
  if (span > kMaxPlanSpan) {
    throw InputError(
        "--plan", {},
        fmt::format("dp x tp x pp x vp x mbs = {} (dp {} derived from {} GPUs) exceeds the {} that a plan may span",
                    span, plan.dp, gpu_count, kMaxPlanSpan));
  }
  // One micro-batch per pipeline stage at least, so the pipeline fills (Narayanan et al. 2021).
  if (plan.global_batch == 0) plan.global_batch = plan.dp * plan.micro_batch_size * plan.pp;
  return plan;
}

std::vector<Verdict> problems(const Plan& p, const workload::Workload& workload, int gpu_count) {
  std::vector<Verdict> out;
  detail::limit_problems(p, out);
  const int model_parallel = p.tp * p.cp * p.pp;
  if (p.dp == 0) {
    out.push_back(
        {Rule::kDpDerivable,
         {{"gpus", gpu_count}, {"tp", p.tp}, {"cp", p.cp}, {"pp", p.pp}, {"model_parallel", model_parallel}}});
  } else if (gpu_count > 0 && p.gpus() != gpu_count) {
    out.push_back(
        {Rule::kDegreesMatchGpus,
         {{"dp", p.dp}, {"tp", p.tp}, {"cp", p.cp}, {"pp", p.pp}, {"product", p.gpus()}, {"gpus", gpu_count}}});
  }
  if (const auto& s = workload.shape) {
    if (s->heads % p.tp != 0) out.push_back({Rule::kTpDividesHeads, {{"heads", s->heads}, {"tp", p.tp}}});
    if (s->kv_heads % p.tp != 0) out.push_back({Rule::kTpDividesKvHeads, {{"kv_heads", s->kv_heads}, {"tp", p.tp}}});
    if (s->ffn_hidden % p.tp != 0) out.push_back({Rule::kTpDividesFfn, {{"ffn_hidden", s->ffn_hidden}, {"tp", p.tp}}});
    // Megatron-Core's MambaMixer splits heads and B/C groups over tp; heads are a multiple of groups.
    if (s->hybrid && s->hybrid->mamba.groups % p.tp != 0)
      out.push_back({Rule::kTpDividesMambaGroups, {{"groups", s->hybrid->mamba.groups}, {"tp", p.tp}}});
    pipeline_split_problems(p, s->layers, s->mtp_layers, out);
  }
  context_parallel_problems(p, workload, out);
  if (p.dp > 0 && p.global_batch % (p.dp * p.micro_batch_size) != 0) {
    out.push_back({Rule::kDpMbsDivideBatch,
                   {{"global_batch", p.global_batch},
                    {"dp", p.dp},
                    {"mbs", p.micro_batch_size},
                    {"product", p.dp * p.micro_batch_size}}});
  }
  if (p.vp > 1 && p.schedule != Schedule::kInterleaved) {
    out.push_back({Rule::kVpNeedsInterleaved, {{"vp", p.vp}, {"schedule", std::string(to_string(p.schedule))}}});
  }
  if (p.schedule == Schedule::kInterleaved) {
    if (p.pp < 2) out.push_back({Rule::kInterleavedNeedsPp, {{"pp", p.pp}}});
    // Megatron-LM asserts this for its interleaved schedule (schedules.py).
    if (p.dp > 0 && p.global_batch % (p.dp * p.micro_batch_size) == 0 && p.micro_batches() % p.pp != 0) {
      out.push_back({Rule::kInterleavedMicroBatches, {{"micro_batches", p.micro_batches()}, {"pp", p.pp}}});
    }
  }
  if (p.sequence_parallel && p.tp < 2) out.push_back({Rule::kSpNeedsTp, {{"tp", p.tp}}});
  if (p.sequence_parallel && p.seq_len > 0 && p.seq_len % p.tp != 0) {
    out.push_back({Rule::kTpDividesSeqWithSp, {{"seq", p.seq_len}, {"tp", p.tp}}});
  }
  if (p.tp_overlap && !p.sequence_parallel) {
    // Megatron-LM overlaps the all-gather and reduce-scatter of sequence parallelism with the
    // GEMMs beside them (--tp-comm-overlap requires --sequence-parallel).
    out.push_back({Rule::kTpOverlapNeedsSp, {{"tp", p.tp}}});
  }
  if (p.sharding == Sharding::kFsdpHybrid && p.dp > 0 && p.dp % p.shard_group != 0) {
    out.push_back({Rule::kHybridGroupDividesDp, {{"dp", p.dp}, {"shard_group", p.shard_group}}});
  }
  // The recipe names Transformer Engine's per-tensor scalings; mxfp8 and nvfp4 scale per block.
  if (p.fp8_recipe_given && p.precision != Precision::kFp8) {
    out.push_back({Rule::kFp8RecipeNeedsFp8, {{"precision", std::string(to_string(p.precision))}}});
  }
  // Megatron-Bridge sets fp8_param_gather in its fp8 and mxfp8 presets, not in nvfp4's (its
  // performance page: "NVFP4 param gather" is not supported yet).
  if (p.fp8_params && p.precision != Precision::kFp8 && p.precision != Precision::kMxfp8) {
    out.push_back({Rule::kFp8ParamsNeedFp8, {{"precision", std::string(to_string(p.precision))}}});
  }
  // Megatron-Core reads recompute_modules only under recompute_granularity="selective".
  if (p.recompute_modules_given && p.recompute != Recompute::kSelective) {
    out.push_back({Rule::kRecomputeModulesNeedSelective, {{"recompute", std::string(to_string(p.recompute))}}});
  }
  add_offload_problems(p, workload, out);
  add_bf16_layer_problems(p, workload, out);
  add_expert_problems(p, workload, out);
  add_overlap_problems(p, out);
  add_peft_problems(p, workload, out);
  add_muon_problems(p, workload, out);
  add_packing_problems(p, out);
  return out;
}

InvalidPlan::InvalidPlan(const std::string& origin, std::vector<Verdict> verdicts)
    : InputError(origin, {}, invalid_plan_message(verdicts)), verdicts_(std::move(verdicts)) {}

std::string invalid_plan_message(const std::vector<Verdict>& verdicts) {
  if (verdicts.size() == 1) return "invalid plan: " + describe(verdicts.front());
  std::string message = "invalid plan:";
  for (const auto& verdict : verdicts) message += "\n  - " + describe(verdict);
  return message;
}

void validate(const Plan& plan, const workload::Workload& workload, int gpu_count, const std::string& origin) {
  auto found = problems(plan, workload, gpu_count);
  if (!found.empty()) throw InvalidPlan(origin, std::move(found));
}

std::string_view to_string(Precision p) {
  switch (p) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kMxfp8:
      return "mxfp8";
    case Precision::kNvfp4:
      return "nvfp4";
  }
  STEPCAST_UNREACHABLE("unknown precision");
}

std::string_view to_string(RankOrder o) {
  return o == RankOrder::kStagesOutermost ? "tp-cp-ep-dp-pp" : "tp-pp-cp-ep-dp";
}

std::string_view to_string(Fp8Recipe r) {
  switch (r) {
    case Fp8Recipe::kDelayed:
      return "delayed";
    case Fp8Recipe::kCurrent:
      return "current";
  }
  STEPCAST_UNREACHABLE("unknown fp8 recipe");
}

std::string_view to_string(Optimizer o) {
  switch (o) {
    case Optimizer::kAdam:
      return "adam";
    case Optimizer::kAdamW:
      return "adamw";
    case Optimizer::kSgdMomentum:
      return "sgd-momentum";
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kMuon:
      return "muon";
  }
  STEPCAST_UNREACHABLE("unknown optimizer");
}

std::string_view to_string(Sharding s) {
  switch (s) {
    case Sharding::kDdp:
      return "ddp";
    case Sharding::kZero1:
      return "zero-1";
    case Sharding::kZero2:
      return "zero-2";
    case Sharding::kZero3:
      return "zero-3";
    case Sharding::kFsdpFull:
      return "fsdp-full";
    case Sharding::kFsdpGradOp:
      return "fsdp-grad-op";
    case Sharding::kFsdpHybrid:
      return "fsdp-hybrid";
    case Sharding::kFsdpNone:
      return "fsdp-none";
  }
  STEPCAST_UNREACHABLE("unknown sharding");
}

std::string_view to_string(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  STEPCAST_UNREACHABLE("unknown recompute");
}

std::span<const NameBit> recompute_module_names() { return kRecomputeModuleNames; }

std::optional<unsigned> recompute_module(std::string_view name) { return name_bit(kRecomputeModuleNames, name); }

std::string recompute_modules_text(unsigned modules) { return name_bits_text(kRecomputeModuleNames, modules); }

std::string_view to_string(Schedule s) {
  switch (s) {
    case Schedule::kGpipe:
      return "gpipe";
    case Schedule::k1F1B:
      return "1f1b";
    case Schedule::kInterleaved:
      return "interleaved";
    case Schedule::kZbH1:
      return "zb-h1";
  }
  STEPCAST_UNREACHABLE("unknown schedule");
}

Precision parse_precision(std::string_view name, const std::string& origin) {
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kBf16, Precision::kFp16, Precision::kFp8,
                      Precision::kMxfp8, Precision::kNvfp4}) {
    if (name == to_string(p)) return p;
  }
  throw InputError(
      origin, {}, fmt::format("unknown precision \"{}\" (expected fp32, tf32, bf16, fp16, fp8, mxfp8 or nvfp4)", name));
}

Optimizer parse_optimizer(std::string_view name, const std::string& origin) {
  for (Optimizer o :
       {Optimizer::kAdam, Optimizer::kAdamW, Optimizer::kSgdMomentum, Optimizer::kSgd, Optimizer::kMuon}) {
    if (name == to_string(o)) return o;
  }
  throw InputError(origin, {},
                   fmt::format("unknown optimizer \"{}\" (expected adam, adamw, sgd-momentum, sgd or muon)", name));
}

namespace {

std::string_view flash_name(const Plan& p) {
  if (!p.flash_attention) return "off";
  switch (p.flash_kernel) {
    case FlashKernel::kNewest:
      return "on";
    case FlashKernel::kFa2:
      return "fa2";
    case FlashKernel::kFa3:
      return "fa3";
    case FlashKernel::kTriton:
      return "triton";
  }
  return "on";
}

}  // namespace

std::string to_string(const Plan& p) {
  std::string sharding;
  switch (p.sharding) {
    case Sharding::kDdp:
      sharding = "zero=0";
      break;
    case Sharding::kZero1:
      sharding = "zero=1";
      break;
    case Sharding::kZero2:
      sharding = "zero=2";
      break;
    case Sharding::kZero3:
      sharding = "zero=3";
      break;
    case Sharding::kFsdpFull:
      sharding = "fsdp=full";
      break;
    case Sharding::kFsdpGradOp:
      sharding = "fsdp=grad-op";
      break;
    case Sharding::kFsdpHybrid:
      sharding = fmt::format("fsdp=hybrid:{}x{}", p.shard_group, p.dp / std::max(1, p.shard_group));
      break;
    case Sharding::kFsdpNone:
      sharding = "fsdp=none";
      break;
  }
  std::string text = fmt::format("dp={},tp={},pp={},vp={},{},mbs={},gbs={}", p.dp, p.tp, p.pp, p.vp, sharding,
                                 p.micro_batch_size, p.global_batch);
  // A bare parameter count has no sequence: no "seq=0" to read as a setting of the plan.
  if (p.seq_len > 0) text += fmt::format(",seq={}", p.seq_len);
  text += fmt::format(",recompute={},schedule={},sp={},flash={},precision={},optimizer={}", to_string(p.recompute),
                      to_string(p.schedule), p.sequence_parallel ? "on" : "off", flash_name(p), to_string(p.precision),
                      to_string(p.optimizer));
  // Communication settings only where given, so plans without them print as before.
  if (p.grad_reduce) text += fmt::format(",grad-reduce={}", to_string(*p.grad_reduce));
  if (p.tp_overlap) text += ",tp-overlap=on";
  if (p.cp > 1) text += fmt::format(",cp={},cp-comm={}", p.cp, to_string(p.cp_comm));
  if (p.pp_first_layers > 0) text += fmt::format(",pp-first-layers={}", p.pp_first_layers);
  if (p.pp_last_layers > 0) text += fmt::format(",pp-last-layers={}", p.pp_last_layers);
  if (p.pp_embedding_loss_layers) text += ",pp-embedding-loss-layers=on";
  if (!p.pp_layout.empty()) text += fmt::format(",pp-layout={}", p.pp_layout);
  if (p.fp8_recipe_given) text += fmt::format(",fp8-recipe={}", to_string(p.fp8_recipe));
  if (p.fp8_params) text += ",fp8-params=on";
  if (p.recompute_modules_given) text += ",recompute-modules=" + recompute_modules_text(p.recompute_modules);
  if (p.offload_layers > 0) text += fmt::format(",offload-layers={}", p.offload_layers);
  if (p.bf16_first_layers > 0) text += fmt::format(",bf16-first-layers={}", p.bf16_first_layers);
  if (p.bf16_last_layers > 0) text += fmt::format(",bf16-last-layers={}", p.bf16_last_layers);
  if (p.mtp_bf16) text += ",mtp-bf16=on";
  if (p.rank_order != RankOrder::kStagesOutermost) text += fmt::format(",order={}", to_string(p.rank_order));
  text += expert_settings_text(p);
  text += overlap_settings_text(p);
  text += peft_settings_text(p);
  text += packing_settings_text(p);
  text += loss_settings_text(p);
  return text;
}

}  // namespace stepcast::plan
