// Applies compact-form plan settings ("tp=2", "fsdp=hybrid:8x4", "recompute=selective") to a Plan.
#include "plan_builder.hpp"

#include "data_parallel_overlap.hpp"
#include "expert_parallel.hpp"
#include "loss_settings.hpp"
#include "name_bits.hpp"
#include "packed_sequences.hpp"
#include "peft.hpp"
#include "rank_order.hpp"
#include "stepcast/plan/layer_map.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>

namespace stepcast::plan {

int parse_positive(std::string_view key, std::string_view value, const KeyFailure& fail) {
  int out = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || out < 1) {
    fail(fmt::format("{}= expects a whole number >= 1, got \"{}\"", key, value));
  }
  return out;
}

namespace {

std::string key_list() {
  std::string list;
  for (std::string_view k : PlanBuilder::keys()) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
  return list;
}

bool parse_switch(std::string_view key, std::string_view value, const KeyFailure& fail) {
  if (value == "on" || value == "true" || value == "1") return true;
  if (value == "off" || value == "false" || value == "0") return false;
  fail(fmt::format("{}= expects on or off, got \"{}\"", key, value));
  return false;
}

/// The keys of where layers and ranks go: the pipeline split (pp-first-layers=, pp-last-layers=,
/// pp-embedding-loss-layers=, pp-layout=) and the rank order (order=). False for any other key.
bool set_placement_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail) {
  std::string why;
  if (key == "pp-first-layers") {
    plan.pp_first_layers = parse_positive(key, value, fail);
  } else if (key == "pp-last-layers") {
    plan.pp_last_layers = parse_positive(key, value, fail);
  } else if (key == "pp-embedding-loss-layers") {
    plan.pp_embedding_loss_layers = parse_switch(key, value, fail);
  } else if (key == "order") {
    const auto order = parse_rank_order(value, why);
    if (!order) fail(fmt::format("order= \"{}\" is not a rank order stepcast lays out: {}", value, why));
    plan.rank_order = order.value_or(RankOrder::kStagesOutermost);
  } else if (key == "pp-layout") {
    if (!parse_pp_layout(value, why)) fail(fmt::format("pp-layout= \"{}\" is not a pipeline layout: {}", value, why));
    plan.pp_layout = std::string(value);
  } else {
    return false;
  }
  return true;
}

/// The keys of what format each GEMM runs in: precision=, the fp8 recipe and weights (fp8-recipe=,
/// fp8-params=) and what stays in bf16 (bf16-first-layers=, bf16-last-layers=, mtp-bf16=). False
/// for any other key.
bool set_precision_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail) {
  if (key == "precision") {
    try {
      plan.precision = parse_precision(value, std::string());
    } catch (const std::exception&) {
      fail(fmt::format("precision= expects fp32, tf32, bf16, fp16, fp8, mxfp8 or nvfp4, got \"{}\"", value));
    }
  } else if (key == "fp8-recipe") {
    if (value == "delayed") {
      plan.fp8_recipe = Fp8Recipe::kDelayed;
    } else if (value == "current") {
      plan.fp8_recipe = Fp8Recipe::kCurrent;
    } else {
      fail(
          fmt::format("fp8-recipe= expects delayed or current (Transformer Engine's DelayedScaling or "
                      "Float8CurrentScaling), got \"{}\"",
                      value));
    }
    plan.fp8_recipe_given = true;
  } else if (key == "fp8-params") {
    plan.fp8_params = parse_switch(key, value, fail);
  } else if (key == "bf16-first-layers") {
    plan.bf16_first_layers = parse_positive(key, value, fail);
  } else if (key == "bf16-last-layers") {
    plan.bf16_last_layers = parse_positive(key, value, fail);
  } else if (key == "mtp-bf16") {
    plan.mtp_bf16 = parse_switch(key, value, fail);
  } else {
    return false;
  }
  return true;
}

}  // namespace

const std::vector<std::string_view>& PlanBuilder::keys() {
  static const std::vector<std::string_view> all = {"dp",
                                                    "tp",
                                                    "pp",
                                                    "vp",
                                                    "zero",
                                                    "fsdp",
                                                    "mbs",
                                                    "gbs",
                                                    "seq",
                                                    "sp",
                                                    "recompute",
                                                    "schedule",
                                                    "flash",
                                                    "precision",
                                                    "optimizer",
                                                    "grad-reduce",
                                                    "tp-overlap",
                                                    "cp",
                                                    "cp-comm",
                                                    "pp-first-layers",
                                                    "pp-last-layers",
                                                    "pp-embedding-loss-layers",
                                                    "pp-layout",
                                                    "order",
                                                    "fp8-recipe",
                                                    "fp8-params",
                                                    "recompute-modules",
                                                    "offload-layers",
                                                    "bf16-first-layers",
                                                    "bf16-last-layers",
                                                    "mtp-bf16",
                                                    "ep",
                                                    "etp",
                                                    "moe-dispatcher",
                                                    "capacity-factor",
                                                    "moe-imbalance",
                                                    "moe-overlap",
                                                    "moe-fused-mlp",
                                                    "overlap-grad-reduce",
                                                    "overlap-param-gather",
                                                    "fsdp-prefetch",
                                                    "peft",
                                                    "lora-rank",
                                                    "lora-targets",
                                                    "doc-len",
                                                    "loss",
                                                    "train-metrics"};
  return all;
}

bool is_plan_key(std::string_view key) {
  return std::find(PlanBuilder::keys().begin(), PlanBuilder::keys().end(), key) != PlanBuilder::keys().end();
}

void PlanBuilder::set(std::string_view key, std::string_view value, const KeyFailure& fail) {
  if (std::find(keys().begin(), keys().end(), key) == keys().end()) {
    fail(fmt::format("unknown plan key \"{}\" (known keys: {})", key, key_list()));
  }
  if (std::find(seen_.begin(), seen_.end(), key) != seen_.end()) fail(fmt::format("plan key \"{}\" given twice", key));
  seen_.emplace_back(key);
  if (key == "dp") {
    plan_.dp = parse_positive(key, value, fail);
  } else if (key == "tp") {
    plan_.tp = parse_positive(key, value, fail);
  } else if (key == "pp") {
    plan_.pp = parse_positive(key, value, fail);
  } else if (key == "vp") {
    plan_.vp = parse_positive(key, value, fail);
  } else if (key == "mbs") {
    plan_.micro_batch_size = parse_positive(key, value, fail);
  } else if (key == "gbs") {
    plan_.global_batch = parse_positive(key, value, fail);
  } else if (key == "seq") {
    plan_.seq_len = parse_positive(key, value, fail);
  } else if (key == "sp") {
    plan_.sequence_parallel = parse_switch(key, value, fail);
  } else if (key == "flash") {
    plan_.flash_given = true;
    // fa2 / fa3 / triton name the kernel; on picks the newest the GPU runs.
    if (value == "fa2" || value == "fa3" || value == "triton") {
      plan_.flash_attention = true;
      plan_.flash_kernel = value == "fa2"   ? FlashKernel::kFa2
                           : value == "fa3" ? FlashKernel::kFa3
                                            : FlashKernel::kTriton;
    } else if (value == "on" || value == "true" || value == "1" || value == "off" || value == "false" || value == "0") {
      plan_.flash_attention = parse_switch(key, value, fail);
    } else {
      fail(fmt::format("flash= expects on, off, fa2, fa3 or triton, got \"{}\"", value));
    }
  } else if (key == "cp") {
    plan_.cp = parse_positive(key, value, fail);
  } else if (key == "cp-comm") {
    plan_.cp_comm_given = true;
    if (value == "p2p") {
      plan_.cp_comm = ContextComm::kP2p;
    } else if (value == "all-gather") {
      plan_.cp_comm = ContextComm::kAllGather;
    } else if (value == "a2a") {
      plan_.cp_comm = ContextComm::kA2a;
    } else {
      fail(fmt::format("cp-comm= expects p2p, all-gather or a2a, got \"{}\"", value));
    }
  } else if (set_placement_key(plan_, key, value, fail) || set_precision_key(plan_, key, value, fail) ||
             set_expert_key(plan_, key, value, fail) || set_overlap_key(plan_, key, value, fail) ||
             set_peft_key(plan_, key, value, fail) || set_packing_key(plan_, key, value, fail) ||
             set_loss_key(plan_, key, value, fail) || set_sharding_key(key, value, fail)) {
    // pp-first-layers=, pp-last-layers=, pp-embedding-loss-layers=, pp-layout=, order=; precision=,
    // fp8-recipe=, fp8-params=, bf16-first-layers=, bf16-last-layers=, mtp-bf16= (above);
    // ep=, etp=, moe-dispatcher=, capacity-factor=, moe-imbalance=, moe-overlap=, moe-fused-mlp=
    // (expert_parallel.cpp);
    // overlap-grad-reduce=, overlap-param-gather=, fsdp-prefetch= (data_parallel_overlap.cpp);
    // peft=, lora-rank=, lora-targets= (peft.cpp); doc-len= (packed_sequences.cpp);
    // loss=, train-metrics= (loss_settings.cpp); zero=, fsdp=
  } else if (key == "tp-overlap") {
    plan_.tp_overlap = parse_switch(key, value, fail);
  } else if (key == "grad-reduce") {
    if (value == "fp32") {
      plan_.grad_reduce = Precision::kFp32;
    } else if (value == "bf16") {
      plan_.grad_reduce = Precision::kBf16;
    } else if (value == "fp16") {
      plan_.grad_reduce = Precision::kFp16;
    } else {
      fail(fmt::format("grad-reduce= expects fp32, bf16 or fp16, got \"{}\"", value));
    }
  } else if (key == "recompute") {
    if (value == "none") {
      plan_.recompute = Recompute::kNone;
    } else if (value == "selective") {
      plan_.recompute = Recompute::kSelective;
    } else if (value == "full") {
      plan_.recompute = Recompute::kFull;
    } else {
      fail(fmt::format("recompute= expects none, selective or full, got \"{}\"", value));
    }
  } else if (key == "recompute-modules") {
    set_recompute_modules(value, fail);
  } else if (key == "offload-layers") {
    plan_.offload_layers = parse_positive(key, value, fail);
  } else if (key == "schedule") {
    bool known = false;
    for (Schedule s : {Schedule::kGpipe, Schedule::k1F1B, Schedule::kInterleaved, Schedule::kZbH1}) {
      if (value == to_string(s)) {
        plan_.schedule = s;
        known = true;
      }
    }
    if (!known) fail(fmt::format("schedule= expects gpipe, 1f1b, interleaved or zb-h1, got \"{}\"", value));
  } else if (key == "optimizer") {
    try {
      plan_.optimizer = parse_optimizer(value, std::string());
    } catch (const std::exception&) {
      fail(fmt::format("optimizer= expects adam, adamw, sgd-momentum, sgd or muon, got \"{}\"", value));
    }
  }
}

void PlanBuilder::set_recompute_modules(std::string_view value, const KeyFailure& fail) {
  plan_.recompute_modules = parse_name_bits(
      recompute_module_names(), "recompute-modules", value,
      [](std::string_view name) {
        return fmt::format(
            "recompute-modules= expects Megatron-Core's module names joined by '+' (core_attn, moe_act, layernorm, "
            "mla_up_proj, mlp, shared_experts, moe), got \"{}\"",
            name);
      },
      fail);
  plan_.recompute_modules_given = true;
}

bool PlanBuilder::set_sharding_key(std::string_view key, std::string_view value, const KeyFailure& fail) {
  if (key == "zero") {
    zero_given_ = true;
    static constexpr Sharding kStages[] = {Sharding::kDdp, Sharding::kZero1, Sharding::kZero2, Sharding::kZero3};
    if (value.size() != 1 || value[0] < '0' || value[0] > '3')
      fail(fmt::format("zero= expects 0, 1, 2 or 3, got \"{}\"", value));
    plan_.sharding = kStages[value[0] - '0'];
  } else if (key == "fsdp") {
    fsdp_given_ = true;
    if (value == "full") {
      plan_.sharding = Sharding::kFsdpFull;
    } else if (value == "grad-op") {
      plan_.sharding = Sharding::kFsdpGradOp;
    } else if (value == "none") {
      plan_.sharding = Sharding::kFsdpNone;
    } else if (value.starts_with("hybrid")) {
      plan_.sharding = Sharding::kFsdpHybrid;
      // hybrid:AxB = shard groups of A ranks, B replicas; hybrid:A = groups of A, replicas derived.
      const std::string_view rest = value.substr(std::string_view("hybrid").size());
      if (rest.empty() || rest[0] != ':')
        fail(fmt::format("fsdp=hybrid needs the shard group size, as hybrid:8 or hybrid:8x4, got \"{}\"", value));
      const std::string_view sizes = rest.substr(1);
      const auto x = sizes.find('x');
      plan_.shard_group = parse_positive("fsdp=hybrid:", sizes.substr(0, x), fail);
      if (x != std::string_view::npos) {
        const int replicas = parse_positive("fsdp=hybrid:AxB's B: ", sizes.substr(x + 1), fail);
        const std::int64_t degree = std::int64_t{plan_.shard_group} * replicas;
        if (degree > kMaxPlanSpan) {
          fail(fmt::format("fsdp=hybrid:{}x{} spans {} ranks, more than the {} that a plan may span", plan_.shard_group,
                           replicas, degree, kMaxPlanSpan));
        }
        fsdp_degree_ = static_cast<int>(degree);
      }
    } else if (!value.empty() && value.find_first_not_of("0123456789") == std::string_view::npos) {
      plan_.sharding = Sharding::kFsdpFull;
      fsdp_degree_ = parse_positive(key, value, fail);
    } else {
      fail(fmt::format("fsdp= expects a GPU count or full, grad-op, hybrid:AxB or none, got \"{}\"", value));
    }
  } else {
    return false;
  }
  return true;
}

Plan PlanBuilder::finish(const KeyFailure& fail) const {
  Plan out = plan_;
  if (zero_given_ && fsdp_given_) fail("give zero= or fsdp=, not both (FSDP is PyTorch's form of ZeRO)");
  if (fsdp_degree_ > 0) {
    if (out.dp != 0 && out.dp != fsdp_degree_) {
      fail(fmt::format("dp={} contradicts the fsdp= degree {}", out.dp, fsdp_degree_));
    }
    out.dp = fsdp_degree_;
  }
  // Later code multiplies these as ints (GPUs = dp*tp*pp, global batch = dp*mbs*pp, ...); any
  // product of them stays representable when the product of all of them does. The check itself
  // multiplies in double: seven factors of up to 2^31 overflow any integer type, and a double is
  // exact up to 2^53, far past the limit.
  const double product = static_cast<double>(std::max(out.dp, 1)) * out.tp * out.cp * out.pp * out.vp *
                         out.micro_batch_size * std::max(out.shard_group, 1);
  if (product > static_cast<double>(kMaxPlanSpan)) {
    fail(fmt::format("dp x tp x pp x vp x mbs x shard group = {:.0f} exceeds the {} that a plan may span", product,
                     kMaxPlanSpan));
  }
  return out;
}

}  // namespace stepcast::plan
