// Expert parallelism as Megatron-core lays it out (Megatron-LM's MoE guide, "parallel folding"):
// within a pipeline stage the GPUs that run the dense layers as tp x dp run the experts as
// etp x ep x edp, so both products must be equal; each MoE layer's routed experts are spread
// over the ep ranks of an expert group.
#include "expert_parallel.hpp"

#include <fmt/format.h>

#include "rule_text.hpp"
#include "stepcast/core/errors.hpp"

#include <charconv>
#include <cmath>

namespace stepcast::plan {

namespace {

int parse_degree(std::string_view key, std::string_view value, const KeyFailure& fail) {
  int out = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || out < 1 || out > (1 << 20)) {
    fail(fmt::format("{}= expects a whole number from 1 to 2^20, got \"{}\"", key, value));
  }
  return out;
}

double parse_ratio(std::string_view key, std::string_view value, double lowest, const KeyFailure& fail,
                   std::string_view meaning) {
  double out = 0.0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(out) || out < lowest || out > 1e6) {
    fail(fmt::format("{}= expects a number >= {} ({}), got \"{}\"", key, lowest, meaning, value));
  }
  return out;
}

}  // namespace

bool Plan::has_expert_settings() const {
  return ep > 1 || etp > 0 || moe_dispatcher != MoeDispatcher::kAllToAll || capacity_factor || moe_imbalance != 1.0 ||
         moe_overlap || moe_fused_mlp;
}

std::string_view to_string(MoeDispatcher d) {
  switch (d) {
    case MoeDispatcher::kAllToAll:
      return "alltoall";
    case MoeDispatcher::kAllGather:
      return "allgather";
    case MoeDispatcher::kFlex:
      return "flex";
  }
  return "alltoall";
}

bool set_expert_key(Plan& plan, std::string_view key, std::string_view value, const KeyFailure& fail) {
  if (key == "ep") {
    plan.ep = parse_degree(key, value, fail);
  } else if (key == "etp") {
    plan.etp = parse_degree(key, value, fail);
  } else if (key == "moe-dispatcher") {
    if (value == "alltoall") {
      plan.moe_dispatcher = MoeDispatcher::kAllToAll;
    } else if (value == "allgather") {
      plan.moe_dispatcher = MoeDispatcher::kAllGather;
    } else if (value == "flex") {
      plan.moe_dispatcher = MoeDispatcher::kFlex;
    } else {
      fail(fmt::format("moe-dispatcher= expects alltoall, allgather or flex, got \"{}\"", value));
    }
  } else if (key == "capacity-factor") {
    // Switch Transformer (Fedus et al. 2022, section 2.2) and Megatron-core: an expert takes at
    // most tokens x top-k / experts x capacity factor; "dropless" (Gale et al. 2023, MegaBlocks)
    // drops nothing.
    if (value != "dropless") {
      plan.capacity_factor =
          parse_ratio(key, value, 0.01, fail,
                      "an expert's most tokens over its balanced share tokens x top-k / experts; or dropless");
    }
  } else if (key == "moe-imbalance") {
    plan.moe_imbalance =
        parse_ratio(key, value, 1.0, fail, "the busiest expert-parallel rank's tokens over the mean; 1 = balanced");
  } else if (key == "moe-overlap" || key == "moe-fused-mlp") {
    bool& setting = key == "moe-overlap" ? plan.moe_overlap : plan.moe_fused_mlp;
    if (value == "on") {
      setting = true;
    } else if (value == "off") {
      setting = false;
    } else {
      fail(fmt::format("{}= expects on or off, got \"{}\"", key, value));
    }
  } else {
    return false;
  }
  return true;
}

namespace {

/// Megatron-Core's checks of its EP all-to-all overlap (TransformerConfig.__post_init__, under
/// overlap_moe_expert_parallel_comm; Megatron-Bridge's moe_a2a_overlap turns it on): the combined
/// 1F1B schedule pairs one micro-batch's forward with another's backward, layer by layer.
void add_moe_overlap_problems(const Plan& p, const workload::TransformerShape& shape, std::vector<Verdict>& out) {
  if (p.ep < 2 || p.moe_dispatcher == MoeDispatcher::kAllGather) {
    out.push_back(
        {Rule::kMoeOverlapNeedsAllToAll, {{"ep", p.ep}, {"dispatcher", std::string(to_string(p.moe_dispatcher))}}});
  }
  // "virtual_pipeline_model_parallel_size must be specified when pipeline_model_parallel_size > 1";
  // a pipeline layout sets it (vp = the layout's chunks per stage, 1 included).
  if (p.pp > 1 && p.vp < 2 && p.pp_layout.empty())
    out.push_back({Rule::kMoeOverlapNeedsVirtualPipeline, {{"pp", p.pp}}});
  // "disable full recomputation", and the moe module re-runs the dispatch the schedule overlaps.
  if (p.recompute == Recompute::kFull) out.push_back({Rule::kMoeOverlapWithFullRecompute, {}});
  if (p.recompute == Recompute::kSelective && (p.recompute_modules & kRecomputeMoe) != 0U) {
    out.push_back({Rule::kMoeOverlapWithMoeRecompute, {}});
  }
  // "mtp_num_layers is None or 1".
  if (shape.mtp_layers > 1) out.push_back({Rule::kMoeOverlapWithMtpLayers, {{"mtp", shape.mtp_layers}}});
  // "only supported with bf16 or fp16 model": fp8 and the block-scaled formats run a 16-bit model.
  if (p.precision == Precision::kFp32 || p.precision == Precision::kTf32) {
    out.push_back({Rule::kMoeOverlapNeeds16Bit, {{"precision", std::string(to_string(p.precision))}}});
  }
}

/// What Transformer Engine's fused grouped MLP takes (transformer_engine/pytorch/ops/fused/,
/// ForwardGroupedMLP_CuTeGEMMSwiGLU_MXFP8: "Fused op for MXFP8 GroupedLinear + scaled GLU +
/// GroupedLinear"): MXFP8 operands and a SwiGLU between the two grouped GEMMs. Its epilogue
/// runs the activation, so the moe_act checkpoint has no kernel of its own to run again.
void add_fused_mlp_problems(const Plan& p, const workload::MoeShape& m, bool gated, const std::string& name,
                            std::vector<Verdict>& out) {
  if (p.precision != Precision::kMxfp8) {
    out.push_back({Rule::kMoeFusedMlpNeedsMxfp8, {{"precision", std::string(to_string(p.precision))}}});
  }
  const char* why = !gated              ? "its experts are not gated (no SwiGLU)"
                    : m.glu_clamp > 0.0 ? "its experts clamp their GLU inputs"
                    : m.expert_biases   ? "its experts carry biases"
                                        : nullptr;
  if (why != nullptr) out.push_back({Rule::kMoeFusedMlpNeedsSwiglu, {{"workload", name}, {"why", std::string(why)}}});
  if (p.recompute == Recompute::kSelective && (p.recompute_modules & kRecomputeMoeAct) != 0U) {
    out.push_back({Rule::kMoeFusedMlpWithMoeActRecompute, {}});
  }
}

}  // namespace

void add_expert_problems(const Plan& p, const workload::Workload& workload, std::vector<Verdict>& out) {
  const bool moe = workload.shape && workload.shape->moe;
  if (!moe) {
    if (p.has_expert_settings()) {
      out.push_back({Rule::kExpertSettingsNeedMoe, {{"ep", p.ep}, {"etp", p.etp}, {"workload", workload.name}}});
    }
    return;
  }
  const workload::MoeShape& m = *workload.shape->moe;
  const int etp = p.expert_tp();
  const std::string sharding(to_string(p.sharding));
  if (p.sharding == Sharding::kFsdpHybrid) {
    // Dense state would shard over the shard group and the experts' over a share of edp that the
    // frameworks lay out their own ways (TorchTitan's dp_shard_mod_ep mesh); stepcast prices
    // experts sharded over the whole expert data-parallel group only.
    out.push_back({Rule::kMoeWithHybridShard, {{"sharding", sharding}}});
  }
  if ((p.zero_stage() == 3 || p.sharding == Sharding::kFsdpGradOp) && p.dp == 1) {
    // With one data-parallel rank the dense layers have nothing to shard over, yet the experts
    // would shard over edp = tp / (etp x ep): no framework runs that layout.
    out.push_back({Rule::kMoeShardingNeedsDp, {{"sharding", sharding}}});
  }
  if (m.experts % p.ep != 0) out.push_back({Rule::kEpDividesExperts, {{"experts", m.experts}, {"ep", p.ep}}});
  if (p.etp > 0 && p.etp != p.tp && p.ep == 1) out.push_back({Rule::kEtpNeedsEp, {{"etp", p.etp}, {"tp", p.tp}}});
  if (m.expert_ffn % etp != 0) {
    out.push_back({Rule::kEtpDividesExpertFfn, {{"expert_ffn", m.expert_ffn}, {"etp", etp}}});
  }
  if (p.dp > 0) {
    // Megatron-core's parallel folding: per stage, tp x cp x dp (dense) = etp x ep x edp (experts).
    // Context-parallel ranks fold into the expert groups too (Megatron-Core's MoE guide: "the CP
    // and EP group are folded together by default"; parallel_state.py divides tp x cp x dp).
    const std::int64_t dense = std::int64_t{p.tp} * p.cp * p.dp;
    const std::int64_t expert = std::int64_t{etp} * p.ep;
    if (dense % expert != 0) {
      out.push_back({Rule::kExpertFolding,
                     {{"tp", p.tp},
                      {"cp", p.cp},
                      {"dp", p.dp},
                      {"dense", dense},
                      {"etp", etp},
                      {"ep", p.ep},
                      {"expert", expert}}});
    }
  }
  if (p.tp > 1 && p.ep > 1 && !p.sequence_parallel) {
    // Megatron-LM (arguments.py) asserts sequence parallel when tensor and expert parallel meet.
    out.push_back({Rule::kTpWithEpNeedsSp, {{"tp", p.tp}, {"ep", p.ep}}});
  }
  if (p.moe_imbalance > p.ep) {
    out.push_back({Rule::kImbalanceWithinEp, {{"imbalance", p.moe_imbalance}, {"ep", p.ep}}});
  }
  if (p.moe_overlap) add_moe_overlap_problems(p, *workload.shape, out);
  if (p.moe_fused_mlp) add_fused_mlp_problems(p, m, workload.shape->gated_mlp, workload.name, out);
}

std::string describe_expert(const Verdict& v) {
  const auto n = [&v](std::string_view name) { return v.number(name); };
  switch (v.rule) {
    case Rule::kExpertSettingsNeedMoe:
      return fmt::format("expert settings (ep={}{}) need a workload with routed experts; {} has none", n("ep"),
                         n("etp") > 0 ? fmt::format(", etp={}", n("etp")) : std::string(), v.text("workload"));
    case Rule::kMoeWithHybridShard:
      return fmt::format(
          "{} with routed experts is not modelled: shard an MoE model over all of dp (fsdp=full, fsdp=grad-op or "
          "zero=3), whose experts shard over the expert data-parallel group",
          v.text("sharding"));
    case Rule::kMoeShardingNeedsDp:
      return fmt::format("{} with routed experts needs dp > 1: the dense layers shard over dp (got dp=1)",
                         v.text("sharding"));
    case Rule::kEpDividesExperts:
      return fmt::format("routed experts ({}) must be divisible by ep ({})", n("experts"), n("ep"));
    case Rule::kEtpNeedsEp:
      return fmt::format(
          "etp={} without expert parallel (ep=1): etp splits the experts of an expert-parallel group; give ep > 1, "
          "or leave etp out to split experts as tp={} does",
          n("etp"), n("tp"));
    case Rule::kEtpDividesExpertFfn:
      return fmt::format("expert ffn size ({}) must be divisible by etp ({})", n("expert_ffn"), n("etp"));
    case Rule::kExpertFolding:
      return fmt::format(
          "expert and dense layers must fold the same GPUs of a stage: dense tp x cp x dp = {} x {} x {} = {} must be "
          "divisible by etp x ep = {} x {} = {} (Megatron-core's parallel folding)",
          n("tp"), n("cp"), n("dp"), n("dense"), n("etp"), n("ep"), n("expert"));
    case Rule::kTpWithEpNeedsSp:
      return fmt::format("tp={} with ep={} needs sequence parallel (sp=on), as Megatron-LM requires", n("tp"), n("ep"));
    case Rule::kImbalanceWithinEp:
      return fmt::format("moe-imbalance ({}) cannot exceed ep ({}): the busiest rank gets at most every token",
                         v.ratio("imbalance"), n("ep"));
    case Rule::kMoeOverlapNeedsAllToAll:
      return fmt::format(
          "moe-overlap=on overlaps the dispatch and combine all-to-alls: it needs ep > 1 and moe-dispatcher=alltoall "
          "or flex (got ep={}, moe-dispatcher={})",
          n("ep"), v.text("dispatcher"));
    case Rule::kMoeOverlapNeedsVirtualPipeline:
      return fmt::format(
          "moe-overlap=on with pp={} needs a virtual pipeline (vp > 1 with schedule=interleaved, or a pp-layout=): "
          "Megatron-Core pairs forwards with backwards in the interleaved schedule only",
          n("pp"));
    case Rule::kMoeOverlapWithFullRecompute:
      return "moe-overlap=on cannot run with recompute=full: Megatron-Core disables full recomputation under its EP "
             "all-to-all overlap (choose recompute=selective or none)";
    case Rule::kMoeOverlapWithMoeRecompute:
      return "moe-overlap=on cannot recompute the moe module: it runs the dispatch the overlap schedules again "
             "(Megatron-Core refuses recompute-modules with moe under its EP all-to-all overlap)";
    case Rule::kMoeOverlapWithMtpLayers:
      return fmt::format(
          "moe-overlap=on runs at most one MTP layer (Megatron-Core: mtp_num_layers None or 1); the workload has {}",
          n("mtp"));
    case Rule::kMoeOverlapNeeds16Bit:
      return fmt::format(
          "moe-overlap=on needs a 16-bit model (bf16, fp16, or fp8 and the block-scaled formats over "
          "one), as Megatron-Core requires (got precision={})",
          v.text("precision"));
    case Rule::kMoeFusedMlpNeedsMxfp8:
      return fmt::format(
          "moe-fused-mlp=on runs Transformer Engine's fused grouped MLP, which takes MXFP8 operands only "
          "(precision=mxfp8; got precision={})",
          v.text("precision"));
    case Rule::kMoeFusedMlpNeedsSwiglu:
      return fmt::format("moe-fused-mlp=on fuses a SwiGLU between the experts' grouped GEMMs; {} cannot run it: {}",
                         v.text("workload"), v.text("why"));
    case Rule::kMoeFusedMlpWithMoeActRecompute:
      return "moe-fused-mlp=on runs the experts' activation inside the grouped GEMM: the moe_act recompute module "
             "has no kernel of its own to run again (drop moe_act from recompute-modules=)";
    default:
      STEPCAST_UNREACHABLE("a rule of expert parallel");
  }
}

std::string expert_settings_text(const Plan& p) {
  if (!p.has_expert_settings()) return {};
  std::string text =
      fmt::format(",ep={},etp={},moe-dispatcher={},capacity-factor={},moe-imbalance={:.4g}", p.ep, p.expert_tp(),
                  to_string(p.moe_dispatcher),
                  p.capacity_factor ? fmt::format("{:.4g}", *p.capacity_factor) : "dropless", p.moe_imbalance);
  if (p.moe_overlap) text += ",moe-overlap=on";
  if (p.moe_fused_mlp) text += ",moe-fused-mlp=on";
  return text;
}

}  // namespace stepcast::plan
