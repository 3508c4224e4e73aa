// The rules of a plan by code: each rule's stable code and its summary (one table), and the
// sentence a verdict reads as, made from its values.
#include "stepcast/plan/verdict.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "rule_text.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/units.hpp"

namespace stepcast::plan {
namespace {

struct RuleInfo {
  Rule rule;
  std::string_view code;
  std::string_view summary;
};

// Summaries are the rule without one plan's numbers; where a summary predates the codes (the
// search report grouped rejections by such text), it is kept word for word.
constexpr std::array kRules = {
    RuleInfo{Rule::kDpDerivable, "dp-derivable", "the GPU count must be divisible by tp*cp*pp to derive dp"},
    RuleInfo{Rule::kDegreesMatchGpus, "degrees-match-gpus", "dp*tp*cp*pp must equal the number of GPUs"},
    RuleInfo{Rule::kTpWithinNode, "tp-within-node", "tp must not exceed the GPUs of one node"},
    RuleInfo{Rule::kTpDividesHeads, "tp-divides-heads", "attention heads must be divisible by tp"},
    RuleInfo{Rule::kTpDividesKvHeads, "tp-divides-kv-heads", "key/value heads must be divisible by tp"},
    RuleInfo{Rule::kTpDividesMambaGroups, "tp-divides-mamba-groups", "Mamba-2 groups must be divisible by tp"},
    RuleInfo{Rule::kTpDividesFfn, "tp-divides-ffn", "ffn hidden size must be divisible by tp"},
    RuleInfo{Rule::kPpVpDivideLayers, "pp-vp-divide-layers", "layers must be divisible by pp*vp"},
    RuleInfo{Rule::kDpMbsDivideBatch, "dp-mbs-divide-batch", "global batch must be divisible by dp*mbs"},
    RuleInfo{Rule::kVpNeedsInterleaved, "vp-needs-interleaved", "vp > 1 needs schedule=interleaved"},
    RuleInfo{Rule::kInterleavedNeedsPp, "interleaved-needs-pp", "schedule=interleaved needs pp > 1"},
    RuleInfo{Rule::kInterleavedMicroBatches, "interleaved-micro-batches",
             "schedule=interleaved needs micro-batches divisible by pp"},
    RuleInfo{Rule::kSpNeedsTp, "sp-needs-tp", "sequence parallel needs tp > 1"},
    RuleInfo{Rule::kTpDividesSeqWithSp, "tp-divides-seq-with-sp",
             "sequence length must be divisible by tp with sequence parallel"},
    RuleInfo{Rule::kTpOverlapNeedsSp, "tp-overlap-needs-sp", "tp-overlap=on needs sequence parallel and tp > 1"},
    RuleInfo{Rule::kHybridGroupDividesDp, "hybrid-group-divides-dp", "dp must be divisible by the hybrid shard group"},
    RuleInfo{Rule::kFp8RecipeNeedsFp8, "fp8-recipe-needs-fp8",
             "fp8-recipe= chooses the per-tensor scaling of precision=fp8 and applies to nothing else"},
    RuleInfo{Rule::kFp8ParamsNeedFp8, "fp8-params-need-fp8", "fp8-params=on needs precision=fp8 or mxfp8"},
    RuleInfo{Rule::kRecomputeModulesNeedSelective, "recompute-modules-need-selective",
             "recompute-modules= needs recompute=selective"},
    RuleInfo{Rule::kUnevenSplitExclusive, "uneven-split-exclusive",
             "give one of pp-first-layers=/pp-last-layers=, pp-embedding-loss-layers=on and pp-layout="},
    RuleInfo{Rule::kUnevenSplitNeedsPp, "uneven-split-needs-pp", "an uneven pipeline split needs pp > 1"},
    RuleInfo{Rule::kStageLayersDivideVp, "stage-layers-divide-vp", "each stage's layers must be divisible by vp"},
    RuleInfo{Rule::kEmbeddingLossSplit, "embedding-loss-split",
             "with pp-embedding-loss-layers=on, layers + 2 must be divisible by pp"},
    RuleInfo{Rule::kUnevenSplitNoOtherStage, "uneven-split-no-other-stage",
             "layers left by pp-first-layers and pp-last-layers need another stage"},
    RuleInfo{Rule::kUnevenSplitRestDivides, "uneven-split-rest-divides",
             "layers left by pp-first-layers and pp-last-layers must be divisible by the other stages"},
    RuleInfo{Rule::kPpLayoutStages, "pp-layout-stages", "pp-layout= must name pp x vp virtual stages"},
    RuleInfo{Rule::kPpLayoutDecoders, "pp-layout-decoders", "pp-layout= must place every transformer layer once"},
    RuleInfo{Rule::kPpLayoutEmptyStage, "pp-layout-empty-stage", "pp-layout= must give every pipeline stage a layer"},
    RuleInfo{Rule::kPpLayoutEnds, "pp-layout-ends", "pp-layout= must begin with the embedding and end with the loss"},
    RuleInfo{Rule::kPpLayoutMtp, "pp-layout-mtp", "pp-layout= must place every MTP module once"},
    RuleInfo{Rule::kPpLayoutMtpPlace, "pp-layout-mtp-place", "pp-layout= must place the MTP modules beside the loss"},
    RuleInfo{Rule::kCpCommNeedsCp, "cp-comm-needs-cp", "cp-comm= needs context parallel"},
    RuleInfo{Rule::kCpNeedsFlash, "cp-needs-flash", "cp needs fused attention"},
    RuleInfo{Rule::kCpWithHybridShard, "cp-with-hybrid-shard", "cp with fsdp=hybrid is not modelled"},
    RuleInfo{Rule::kCpDividesSeq, "cp-divides-seq", "sequence length must be divisible by cp"},
    RuleInfo{Rule::kTwoCpDividesSeq, "two-cp-divides-seq", "sequence length must be divisible by 2*cp"},
    RuleInfo{Rule::kCpTokensDivideTp, "cp-tokens-divide-tp",
             "with sequence parallel, each context-parallel rank's tokens must be divisible by tp"},
    RuleInfo{Rule::kA2aHeadsDivideTpCp, "a2a-heads-divide-tp-cp",
             "cp-comm=a2a needs attention heads divisible by tp*cp"},
    RuleInfo{Rule::kA2aKvHeadsDivideTpCp, "a2a-kv-heads-divide-tp-cp",
             "cp-comm=a2a needs key/value heads divisible by tp*cp"},
    RuleInfo{Rule::kCpDividesMambaHeads, "cp-divides-mamba-heads",
             "context parallel needs each tensor rank's Mamba-2 heads divisible by cp"},
    RuleInfo{Rule::kCpSplitsMambaGroups, "cp-splits-mamba-groups",
             "context parallel needs each tensor rank's Mamba-2 groups and cp to divide one another"},
    RuleInfo{Rule::kExpertSettingsNeedMoe, "expert-settings-need-moe",
             "expert settings need a workload with routed experts"},
    RuleInfo{Rule::kMoeWithHybridShard, "moe-with-hybrid-shard", "fsdp=hybrid with routed experts is not modelled"},
    RuleInfo{Rule::kMoeShardingNeedsDp, "moe-sharding-needs-dp", "sharded state with routed experts needs dp > 1"},
    RuleInfo{Rule::kEpDividesExperts, "ep-divides-experts", "routed experts must be divisible by ep"},
    RuleInfo{Rule::kEtpNeedsEp, "etp-needs-ep", "etp other than tp needs expert parallel (ep > 1)"},
    RuleInfo{Rule::kEtpDividesExpertFfn, "etp-divides-expert-ffn", "expert ffn size must be divisible by etp"},
    RuleInfo{Rule::kExpertFolding, "expert-folding", "expert and dense layers must fold the same GPUs of a stage"},
    RuleInfo{Rule::kTpWithEpNeedsSp, "tp-with-ep-needs-sp", "tp with ep needs sequence parallel"},
    RuleInfo{Rule::kImbalanceWithinEp, "imbalance-within-ep", "moe-imbalance cannot exceed ep"},
    RuleInfo{Rule::kMoeOverlapNeedsAllToAll, "moe-overlap-needs-all-to-all",
             "moe-overlap=on needs ep > 1 and moe-dispatcher=alltoall"},
    RuleInfo{Rule::kMoeOverlapNeedsVirtualPipeline, "moe-overlap-needs-virtual-pipeline",
             "moe-overlap=on with pp > 1 needs a virtual pipeline"},
    RuleInfo{Rule::kMoeOverlapWithFullRecompute, "moe-overlap-with-full-recompute",
             "moe-overlap=on with recompute=full"},
    RuleInfo{Rule::kMoeOverlapWithMoeRecompute, "moe-overlap-with-moe-recompute",
             "moe-overlap=on with the moe recompute module"},
    RuleInfo{Rule::kMoeOverlapWithMtpLayers, "moe-overlap-with-mtp-layers",
             "moe-overlap=on with more than one MTP layer"},
    RuleInfo{Rule::kMoeOverlapNeeds16Bit, "moe-overlap-needs-16-bit", "moe-overlap=on needs a 16-bit model"},
    RuleInfo{Rule::kMoeFusedMlpNeedsMxfp8, "moe-fused-mlp-needs-mxfp8", "moe-fused-mlp=on needs precision=mxfp8"},
    RuleInfo{Rule::kMoeFusedMlpNeedsSwiglu, "moe-fused-mlp-needs-swiglu",
             "moe-fused-mlp=on needs SwiGLU experts without biases or a clamp"},
    RuleInfo{Rule::kMoeFusedMlpWithMoeActRecompute, "moe-fused-mlp-with-moe-act-recompute",
             "moe-fused-mlp=on with the moe_act recompute module"},
    RuleInfo{Rule::kGradReduceNeedsDp, "grad-reduce-needs-dp", "overlap-grad-reduce= needs data parallel"},
    RuleInfo{Rule::kGradReduceWithLayerwise, "grad-reduce-with-layerwise",
             "overlap-grad-reduce= chooses nothing for FSDP or ZeRO-3"},
    RuleInfo{Rule::kGradReduceOffWithZero2, "grad-reduce-off-with-zero2", "overlap-grad-reduce=off with zero=2"},
    RuleInfo{Rule::kParamGatherNeedsShardedOptimizer, "param-gather-needs-sharded-optimizer",
             "overlap-param-gather= needs zero=1 or zero=2"},
    RuleInfo{Rule::kParamGatherNeedsGradOverlap, "param-gather-needs-grad-overlap",
             "overlap-param-gather=on needs overlap-grad-reduce=on"},
    RuleInfo{Rule::kFsdpPrefetchNeedsRegather, "fsdp-prefetch-needs-regather",
             "fsdp-prefetch= needs fsdp=full or fsdp=hybrid"},
    RuleInfo{Rule::kLoraRankNeedsLora, "lora-rank-needs-lora", "lora-rank= needs peft=lora"},
    RuleInfo{Rule::kLoraTargetsNeedLora, "lora-targets-need-lora", "lora-targets= needs peft=lora"},
    RuleInfo{Rule::kLoraWithShardedWeights, "lora-with-sharded-weights",
             "peft=lora with FSDP or ZeRO-3 is not modelled"},
    RuleInfo{Rule::kLoraWithRoutedExperts, "lora-with-routed-experts", "peft=lora with routed experts is not modelled"},
    RuleInfo{Rule::kLoraNeedsShape, "lora-needs-shape", "peft=lora needs a workload with layer shapes"},
    RuleInfo{Rule::kLoraMambaTargetsNeedMamba, "lora-mamba-targets-need-mamba",
             "lora-targets=in_proj or out_proj needs a workload with Mamba-2 layers"},
    RuleInfo{Rule::kMuonWithLora, "muon-with-lora", "optimizer=muon with peft=lora is not modelled"},
    RuleInfo{Rule::kMuonWithShardedWeights, "muon-with-sharded-weights",
             "optimizer=muon with FSDP or ZeRO-3 is not modelled"},
    RuleInfo{Rule::kMuonNeedsShape, "muon-needs-shape", "optimizer=muon needs a workload with layer shapes"},
    RuleInfo{Rule::kDocLenAboveSeq, "doc-len-above-seq", "doc-len= exceeds the sequence length"},
    RuleInfo{Rule::kDocLenNeedsFlash, "doc-len-needs-flash", "doc-len= needs flash attention"},
    RuleInfo{Rule::kDocLenWithCp, "doc-len-with-cp", "doc-len= with context parallel is not modelled"},
    RuleInfo{Rule::kOffloadBelowLayers, "offload-below-layers",
             "offload-layers= must be fewer than the transformer layers"},
    RuleInfo{Rule::kOffloadNeedsNoPipeline, "offload-needs-no-pipeline", "offload-layers= needs pp=1"},
    RuleInfo{Rule::kOffloadNeedsNoRecompute, "offload-needs-no-recompute", "offload-layers= needs recompute=none"},
    RuleInfo{Rule::kBf16LayersNeedLowPrecision, "bf16-layers-need-low-precision",
             "bf16-first-layers=, bf16-last-layers= and mtp-bf16= need precision=fp8, mxfp8 or nvfp4"},
    RuleInfo{Rule::kBf16LayersBelowLayers, "bf16-layers-below-layers",
             "bf16-first-layers= and bf16-last-layers= together must be fewer than the transformer layers"},
    RuleInfo{Rule::kBf16LayersNotDelayed, "bf16-layers-not-delayed",
             "bf16-first-layers= and bf16-last-layers= do not run with fp8-recipe=delayed"},
    RuleInfo{Rule::kMtpBf16NeedsMtp, "mtp-bf16-needs-mtp", "mtp-bf16=on needs a workload with MTP modules"},
    RuleInfo{Rule::kSequenceLimit, "sequence-limit", "the sequence length is above stepcast's limit"},
    RuleInfo{Rule::kTokensPerStepLimit, "tokens-per-step-limit", "the tokens per step are above stepcast's limit"},
    RuleInfo{Rule::kMicroBatchLimit, "micro-batch-limit", "the micro-batches per step are above stepcast's limit"},
    RuleInfo{Rule::kFitsGpuMemory, "fits-gpu-memory", "does not fit in GPU memory"},
};

constexpr bool table_in_declaration_order() {
  for (std::size_t i = 0; i < kRules.size(); ++i) {
    if (static_cast<std::size_t>(kRules[i].rule) != i) return false;
  }
  return true;
}
static_assert(table_in_declaration_order(), "kRules lists every rule once, in the order Rule declares them");
static_assert(static_cast<std::size_t>(Rule::kFitsGpuMemory) + 1 == kRules.size(), "kRules ends with the last rule");

const RuleInfo& info(Rule rule) { return kRules[static_cast<std::size_t>(rule)]; }

template <class T>
const T& value_of(const Verdict& v, std::string_view name) {
  for (const RuleValue& value : v.values) {
    if (value.name == name && std::holds_alternative<T>(value.value)) return std::get<T>(value.value);
  }
  STEPCAST_UNREACHABLE(fmt::format("verdict {} carries no value \"{}\" of that type", rule_code(v.rule), name));
}

}  // namespace

std::int64_t Verdict::number(std::string_view name) const { return value_of<std::int64_t>(*this, name); }
double Verdict::ratio(std::string_view name) const { return value_of<double>(*this, name); }
const std::string& Verdict::text(std::string_view name) const { return value_of<std::string>(*this, name); }

std::string_view rule_code(Rule rule) { return info(rule).code; }
std::string_view rule_summary(Rule rule) { return info(rule).summary; }

const std::vector<Rule>& all_rules() {
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> out;
    for (const RuleInfo& r : kRules) out.push_back(r.rule);
    return out;
  }();
  return rules;
}

namespace {

/// The sentences of the degrees, the tensor-parallel splits, the schedule and the precision keys.
std::string describe_degrees(const Verdict& v) {
  const auto n = [&v](std::string_view name) { return v.number(name); };
  const auto t = [&v](std::string_view name) -> const std::string& { return v.text(name); };
  switch (v.rule) {
    case Rule::kDpDerivable:
      return n("cp") > 1 ? fmt::format("the GPU count ({}) must be divisible by tp*cp*pp = {}*{}*{} = {} to derive dp",
                                       n("gpus"), n("tp"), n("cp"), n("pp"), n("model_parallel"))
                         : fmt::format("the GPU count ({}) must be divisible by tp*pp = {}*{} = {} to derive dp",
                                       n("gpus"), n("tp"), n("pp"), n("model_parallel"));
    case Rule::kDegreesMatchGpus:
      return n("cp") > 1 ? fmt::format("dp*tp*cp*pp = {}*{}*{}*{} = {} must equal the number of GPUs ({})", n("dp"),
                                       n("tp"), n("cp"), n("pp"), n("product"), n("gpus"))
                         : fmt::format("dp*tp*pp = {}*{}*{} = {} must equal the number of GPUs ({})", n("dp"), n("tp"),
                                       n("pp"), n("product"), n("gpus"));
    case Rule::kTpWithinNode:
      return fmt::format("tp ({}) must not exceed the GPUs of one node ({})", n("tp"), n("gpus_per_node"));
    case Rule::kTpDividesHeads:
      return fmt::format("attention heads ({}) must be divisible by tp ({})", n("heads"), n("tp"));
    case Rule::kTpDividesKvHeads:
      return fmt::format("key/value heads ({}) must be divisible by tp ({})", n("kv_heads"), n("tp"));
    case Rule::kTpDividesMambaGroups:
      return fmt::format("Mamba-2 groups ({}) must be divisible by tp ({}): Megatron-Core splits B and C by group",
                         n("groups"), n("tp"));
    case Rule::kTpDividesFfn:
      return fmt::format("ffn hidden size ({}) must be divisible by tp ({})", n("ffn_hidden"), n("tp"));
    case Rule::kPpVpDivideLayers:
      return fmt::format("layers ({}) must be divisible by pp*vp = {}*{} = {}", n("layers"), n("pp"), n("vp"),
                         n("stages"));
    case Rule::kDpMbsDivideBatch:
      return fmt::format("global batch ({}) must be divisible by dp*mbs = {}*{} = {}", n("global_batch"), n("dp"),
                         n("mbs"), n("product"));
    case Rule::kVpNeedsInterleaved:
      return fmt::format("vp={} needs schedule=interleaved (got schedule={})", n("vp"), t("schedule"));
    case Rule::kInterleavedNeedsPp:
      return fmt::format("schedule=interleaved needs pp > 1 (got pp={})", n("pp"));
    case Rule::kInterleavedMicroBatches:
      return fmt::format("schedule=interleaved needs micro-batches ({}) divisible by pp ({})", n("micro_batches"),
                         n("pp"));
    case Rule::kSpNeedsTp:
      return fmt::format("sequence parallel needs tp > 1 (got tp={})", n("tp"));
    case Rule::kTpDividesSeqWithSp:
      return fmt::format("sequence length ({}) must be divisible by tp ({}) with sequence parallel", n("seq"), n("tp"));
    case Rule::kTpOverlapNeedsSp:
      return fmt::format("tp-overlap=on needs sequence parallel (sp=on) and tp > 1 (got tp={}, sp=off)", n("tp"));
    case Rule::kHybridGroupDividesDp:
      return fmt::format("dp ({}) must be divisible by the hybrid shard group ({})", n("dp"), n("shard_group"));
    case Rule::kFp8RecipeNeedsFp8:
      return fmt::format(
          "fp8-recipe= chooses the per-tensor scaling of precision=fp8 and applies to nothing else (got precision={})",
          t("precision"));
    case Rule::kFp8ParamsNeedFp8:
      return fmt::format(
          "fp8-params=on keeps the weights in fp8 or mxfp8 (Megatron-Core's --fp8-param-gather); precision={} has no "
          "such weights",
          t("precision"));
    case Rule::kRecomputeModulesNeedSelective:
      return fmt::format(
          "recompute-modules= names what recompute=selective runs again (Megatron-Core reads recompute_modules "
          "only with recompute_granularity=selective); this plan has recompute={}",
          t("recompute"));
    default:
      STEPCAST_UNREACHABLE("a rule of the degrees, schedule or precision");
  }
}

/// The sentences of the range limits and of the memory check.
std::string describe_limits(const Verdict& v) {
  const auto n = [&v](std::string_view name) { return v.number(name); };
  switch (v.rule) {
    case Rule::kSequenceLimit:
      return fmt::format("the sequence length {} is above stepcast's limit of {} tokens", n("seq"), n("limit"));
    case Rule::kTokensPerStepLimit:
      return fmt::format(
          "global batch x sequence = {} x {} = {} tokens per step is above stepcast's limit of {} (2^36), thousands "
          "of times the largest published batch",
          n("global_batch"), n("seq"), n("tokens"), n("limit"));
    case Rule::kMicroBatchLimit:
      return fmt::format(
          "global batch / (dp x mbs) = {} / ({} x {}) = {} micro-batches per step is above stepcast's limit of {}: "
          "raise mbs= or dp=, or lower the global batch",
          n("global_batch"), n("dp"), n("mbs"), n("micro_batches"), n("limit"));
    case Rule::kFitsGpuMemory: {
      const Bytes needed(v.ratio("needed_bytes"));
      const Bytes headroom(v.ratio("headroom_bytes"));
      const Bytes capacity(v.ratio("capacity_bytes"));
      // Over the margin but under the capacity: the plan would leave too little to run.
      if (headroom.value() >= 0.0) {
        return fmt::format("needs {} per GPU, leaving {} of the {} of the GPU: inside the margin of {}",
                           format_bytes(needed), format_bytes(headroom), format_bytes(capacity),
                           format_bytes(Bytes(v.ratio("margin_bytes"))));
      }
      return fmt::format("needs {} per GPU, {} more than the {} of the GPU", format_bytes(needed),
                         format_bytes(-headroom), format_bytes(capacity));
    }
    default:
      STEPCAST_UNREACHABLE("a range limit or the memory check");
  }
}

}  // namespace

std::string describe(const Verdict& v) {
  switch (v.rule) {
    case Rule::kUnevenSplitExclusive:
    case Rule::kUnevenSplitNeedsPp:
    case Rule::kStageLayersDivideVp:
    case Rule::kEmbeddingLossSplit:
    case Rule::kUnevenSplitNoOtherStage:
    case Rule::kUnevenSplitRestDivides:
    case Rule::kPpLayoutStages:
    case Rule::kPpLayoutDecoders:
    case Rule::kPpLayoutEmptyStage:
    case Rule::kPpLayoutEnds:
    case Rule::kPpLayoutMtp:
    case Rule::kPpLayoutMtpPlace:
      return describe_pipeline_split(v);
    case Rule::kCpCommNeedsCp:
    case Rule::kCpNeedsFlash:
    case Rule::kCpWithHybridShard:
    case Rule::kCpDividesSeq:
    case Rule::kTwoCpDividesSeq:
    case Rule::kCpTokensDivideTp:
    case Rule::kA2aHeadsDivideTpCp:
    case Rule::kA2aKvHeadsDivideTpCp:
    case Rule::kCpDividesMambaHeads:
    case Rule::kCpSplitsMambaGroups:
      return describe_context_parallel(v);
    case Rule::kExpertSettingsNeedMoe:
    case Rule::kMoeWithHybridShard:
    case Rule::kMoeShardingNeedsDp:
    case Rule::kEpDividesExperts:
    case Rule::kEtpNeedsEp:
    case Rule::kEtpDividesExpertFfn:
    case Rule::kExpertFolding:
    case Rule::kTpWithEpNeedsSp:
    case Rule::kImbalanceWithinEp:
    case Rule::kMoeOverlapNeedsAllToAll:
    case Rule::kMoeOverlapNeedsVirtualPipeline:
    case Rule::kMoeOverlapWithFullRecompute:
    case Rule::kMoeOverlapWithMoeRecompute:
    case Rule::kMoeOverlapWithMtpLayers:
    case Rule::kMoeOverlapNeeds16Bit:
    case Rule::kMoeFusedMlpNeedsMxfp8:
    case Rule::kMoeFusedMlpNeedsSwiglu:
    case Rule::kMoeFusedMlpWithMoeActRecompute:
      return describe_expert(v);
    case Rule::kGradReduceNeedsDp:
    case Rule::kGradReduceWithLayerwise:
    case Rule::kGradReduceOffWithZero2:
    case Rule::kParamGatherNeedsShardedOptimizer:
    case Rule::kParamGatherNeedsGradOverlap:
    case Rule::kFsdpPrefetchNeedsRegather:
      return describe_overlap(v);
    case Rule::kLoraRankNeedsLora:
    case Rule::kLoraTargetsNeedLora:
    case Rule::kLoraWithShardedWeights:
    case Rule::kLoraWithRoutedExperts:
    case Rule::kLoraNeedsShape:
    case Rule::kLoraMambaTargetsNeedMamba:
      return describe_peft(v);
    case Rule::kMuonWithLora:
    case Rule::kMuonWithShardedWeights:
    case Rule::kMuonNeedsShape:
      return describe_muon(v);
    case Rule::kDocLenAboveSeq:
    case Rule::kDocLenNeedsFlash:
    case Rule::kDocLenWithCp:
      return describe_packing(v);
    case Rule::kOffloadBelowLayers:
    case Rule::kOffloadNeedsNoPipeline:
    case Rule::kOffloadNeedsNoRecompute:
      return describe_offload(v);
    case Rule::kBf16LayersNeedLowPrecision:
    case Rule::kBf16LayersBelowLayers:
    case Rule::kBf16LayersNotDelayed:
    case Rule::kMtpBf16NeedsMtp:
      return describe_bf16_layers(v);
    case Rule::kSequenceLimit:
    case Rule::kTokensPerStepLimit:
    case Rule::kMicroBatchLimit:
    case Rule::kFitsGpuMemory:
      return describe_limits(v);
    case Rule::kDpDerivable:
    case Rule::kDegreesMatchGpus:
    case Rule::kTpWithinNode:
    case Rule::kTpDividesHeads:
    case Rule::kTpDividesKvHeads:
    case Rule::kTpDividesMambaGroups:
    case Rule::kTpDividesFfn:
    case Rule::kPpVpDivideLayers:
    case Rule::kDpMbsDivideBatch:
    case Rule::kVpNeedsInterleaved:
    case Rule::kInterleavedNeedsPp:
    case Rule::kInterleavedMicroBatches:
    case Rule::kSpNeedsTp:
    case Rule::kTpDividesSeqWithSp:
    case Rule::kTpOverlapNeedsSp:
    case Rule::kHybridGroupDividesDp:
    case Rule::kFp8RecipeNeedsFp8:
    case Rule::kFp8ParamsNeedFp8:
    case Rule::kRecomputeModulesNeedSelective:
      return describe_degrees(v);
  }
  STEPCAST_UNREACHABLE("every rule has its sentence");
}

}  // namespace stepcast::plan
