// Why a plan is refused: the rule it breaks, as a code, and the numbers it breaks it with. Programs
// read the code (the planner groups rejections by it, JSON carries it); the sentence people read is
// made from the code and its values, and nothing parses it back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace stepcast::plan {

/// Every rule a plan can break. The rules of plan::problems(), and two that the planner checks
/// against the cluster: tensor parallel inside a node, and the plan's memory against the GPU's.
enum class Rule {
  // The degrees and the GPU count.
  kDpDerivable,                    ///< gpus, tp, cp, pp, model_parallel: tp*cp*pp divides the GPU count
  kDegreesMatchGpus,               ///< dp, tp, cp, pp, product, gpus: the degrees multiply to the GPU count
  kTpWithinNode,                   ///< tp, gpus_per_node: tensor parallel stays inside a node (planner)
  kTpDividesHeads,                 ///< heads, tp
  kTpDividesKvHeads,               ///< kv_heads, tp
  kTpDividesMambaGroups,           ///< groups, tp (a hybrid model's Mamba-2 B/C groups)
  kTpDividesFfn,                   ///< ffn_hidden, tp
  kPpVpDivideLayers,               ///< layers, pp, vp, stages
  kDpMbsDivideBatch,               ///< global_batch, dp, mbs, product
  kVpNeedsInterleaved,             ///< vp, schedule (a name)
  kInterleavedNeedsPp,             ///< pp
  kInterleavedMicroBatches,        ///< micro_batches, pp
  kSpNeedsTp,                      ///< tp
  kTpDividesSeqWithSp,             ///< seq, tp
  kTpOverlapNeedsSp,               ///< tp
  kHybridGroupDividesDp,           ///< dp, shard_group
  kFp8RecipeNeedsFp8,              ///< precision (a name)
  kFp8ParamsNeedFp8,               ///< precision (a name)
  kRecomputeModulesNeedSelective,  ///< recompute (a name)
  // Uneven pipelines (pipeline_split.cpp).
  kUnevenSplitExclusive,     ///< no values
  kUnevenSplitNeedsPp,       ///< pp
  kStageLayersDivideVp,      ///< stage (a name), layers, vp
  kEmbeddingLossSplit,       ///< layers, pp
  kUnevenSplitNoOtherStage,  ///< layers, first, last, rest, pp
  kUnevenSplitRestDivides,   ///< layers, first, last, rest, stages
  kPpLayoutStages,           ///< stages, pp, vp
  kPpLayoutDecoders,         ///< decoders, layers
  kPpLayoutEmptyStage,       ///< stage
  kPpLayoutEnds,             ///< no values
  kPpLayoutMtp,              ///< mtp, mtp_layers
  kPpLayoutMtpPlace,         ///< mtp
  // Context parallel (context_parallel.cpp).
  kCpCommNeedsCp,         ///< no values
  kCpNeedsFlash,          ///< cp
  kCpWithHybridShard,     ///< cp
  kCpDividesSeq,          ///< seq, cp
  kTwoCpDividesSeq,       ///< seq, cp, cp_comm (a name)
  kCpTokensDivideTp,      ///< seq, cp, tokens, tp
  kA2aHeadsDivideTpCp,    ///< heads, tp, cp
  kA2aKvHeadsDivideTpCp,  ///< kv_heads, tp, cp
  kCpDividesMambaHeads,   ///< heads, tp, cp
  kCpSplitsMambaGroups,   ///< groups, tp, cp
  // Expert parallel (expert_parallel.cpp).
  kExpertSettingsNeedMoe,           ///< ep, etp (0: not given), workload (a name)
  kMoeWithHybridShard,              ///< sharding (a name)
  kMoeShardingNeedsDp,              ///< sharding (a name)
  kEpDividesExperts,                ///< experts, ep
  kEtpNeedsEp,                      ///< etp, tp
  kEtpDividesExpertFfn,             ///< expert_ffn, etp
  kExpertFolding,                   ///< tp, cp, dp, dense, etp, ep, expert
  kTpWithEpNeedsSp,                 ///< tp, ep
  kImbalanceWithinEp,               ///< imbalance (a ratio), ep
  kMoeOverlapNeedsAllToAll,         ///< ep, dispatcher (a name)
  kMoeOverlapNeedsVirtualPipeline,  ///< pp
  kMoeOverlapWithFullRecompute,     ///< no values
  kMoeOverlapWithMoeRecompute,      ///< no values
  kMoeOverlapWithMtpLayers,         ///< mtp (MTP layers of the workload)
  kMoeOverlapNeeds16Bit,            ///< precision (a name)
  kMoeFusedMlpNeedsMxfp8,           ///< precision (a name)
  kMoeFusedMlpNeedsSwiglu,          ///< workload (a name), why (a phrase)
  kMoeFusedMlpWithMoeActRecompute,  ///< no values
  // Data-parallel overlap settings (data_parallel_overlap.cpp).
  kGradReduceNeedsDp,                 ///< setting (on/off), dp, cp
  kGradReduceWithLayerwise,           ///< setting (on/off), sharding (a name: FSDP or ZeRO-3)
  kGradReduceOffWithZero2,            ///< no values
  kParamGatherNeedsShardedOptimizer,  ///< setting (on/off), stage
  kParamGatherNeedsGradOverlap,       ///< no values
  kFsdpPrefetchNeedsRegather,         ///< "sharding"
  // Fine-tuning (peft.cpp).
  kLoraRankNeedsLora,          ///< rank
  kLoraTargetsNeedLora,        ///< targets (a name)
  kLoraWithShardedWeights,     ///< sharding (a name)
  kLoraWithRoutedExperts,      ///< workload (a name)
  kLoraNeedsShape,             ///< workload (a name)
  kLoraMambaTargetsNeedMamba,  ///< targets (names), workload (a name)
  // Muon (muon.cpp).
  kMuonWithLora,            ///< (none)
  kMuonWithShardedWeights,  ///< sharding ("FSDP" or "zero=3")
  kMuonNeedsShape,          ///< workload (a name)
  // Sequences packed from documents (packed_sequences.cpp).
  kDocLenAboveSeq,    ///< doc_len, seq
  kDocLenNeedsFlash,  ///< doc_len
  kDocLenWithCp,      ///< doc_len, cp
  // Activation offload to the host (activation_offload.cpp).
  kOffloadBelowLayers,       ///< offload, layers
  kOffloadNeedsNoPipeline,   ///< pp
  kOffloadNeedsNoRecompute,  ///< recompute (a name)
  // Layers kept in bf16 under a low-precision plan (bf16_layers.cpp).
  kBf16LayersNeedLowPrecision,  ///< precision (a name)
  kBf16LayersBelowLayers,       ///< first, last, layers
  kBf16LayersNotDelayed,        ///< no values
  kMtpBf16NeedsMtp,             ///< workload (a name)
  // Range limits (plan_limits.cpp): checked before any arithmetic on the batch.
  kSequenceLimit,       ///< seq, limit
  kTokensPerStepLimit,  ///< global_batch, seq, tokens, limit
  kMicroBatchLimit,     ///< global_batch, dp, mbs, micro_batches, limit
  // Memory (planner): the plan's memory against the GPU's, with the model's safety margin.
  kFitsGpuMemory,  ///< needed_bytes, headroom_bytes (negative when over), capacity_bytes, margin_bytes
};

/// One value a verdict carries: a whole number, a ratio, or the name of a setting.
struct RuleValue {
  std::string_view name;
  std::variant<std::int64_t, double, std::string> value;
};

/// A broken rule with its values, e.g. {kTpDividesHeads, {{"heads", 32}, {"tp", 3}}}.
struct Verdict {
  Rule rule = Rule::kDpDerivable;
  std::vector<RuleValue> values;

  /// The whole number called `name`. Precondition (asserted): the verdict carries it.
  [[nodiscard]] std::int64_t number(std::string_view name) const;
  /// The ratio called `name`. Precondition (asserted): the verdict carries it.
  [[nodiscard]] double ratio(std::string_view name) const;
  /// The setting's name called `name`. Precondition (asserted): the verdict carries it.
  [[nodiscard]] const std::string& text(std::string_view name) const;
};

/// The code programs read, stable across releases: "tp-divides-heads".
std::string_view rule_code(Rule rule);

/// The rule in words, without the numbers of any one plan: "attention heads must be divisible by
/// tp". Reports group rejected candidates under it.
std::string_view rule_summary(Rule rule);

/// The verdict in words with its numbers, as errors print it: "attention heads (32) must be
/// divisible by tp (3)".
std::string describe(const Verdict& verdict);

/// Every rule, in declaration order (for tests and documentation).
const std::vector<Rule>& all_rules();

}  // namespace stepcast::plan
