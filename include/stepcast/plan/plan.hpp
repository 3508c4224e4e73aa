// A parallelism plan: how a workload is split over GPUs (data, tensor, pipeline parallel,
// sharding), and the training settings that change time and memory (batch, precision, ...).
#pragma once

#include <cstdint>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/plan/verdict.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::plan {

/// Training precision. fp8, mxfp8 and nvfp4 run the transformer layers' linear GEMMs in that format
/// and everything else in bf16, as Transformer Engine does (its DelayedScaling or
/// Float8CurrentScaling, MXFP8BlockScaling and NVFP4BlockScaling recipes).
enum class Precision { kFp32, kTf32, kBf16, kFp16, kFp8, kMxfp8, kNvfp4 };
/// How precision=fp8 scales its tensors (Transformer Engine recipes): from the amax history of
/// earlier steps (DelayedScaling, TE's default) or from each tensor's own amax (Float8CurrentScaling).
enum class Fp8Recipe { kDelayed, kCurrent };
/// kMuon: Megatron-Core's Muon (Jordan et al. 2024), momentum orthogonalized by Newton-Schulz on the
/// transformer blocks' weight matrices, Adam on the embeddings, output layer and 1-D parameters.
enum class Optimizer { kAdam, kAdamW, kSgdMomentum, kSgd, kMuon };

/// How model state is split over the data-parallel ranks.
/// ZeRO stages as Rajbhandari et al. 2020; FSDP strategies as PyTorch's ShardingStrategy:
/// FULL_SHARD shards like ZeRO-3, SHARD_GRAD_OP like ZeRO-2, HYBRID_SHARD like ZeRO-3 inside a
/// shard group and replicated across groups, NO_SHARD like DDP.
enum class Sharding { kDdp, kZero1, kZero2, kZero3, kFsdpFull, kFsdpGradOp, kFsdpHybrid, kFsdpNone };

/// Fused attention kernels: FlashAttention-2 (Dao 2023), FlashAttention-3 (Shah et al. 2024,
/// Hopper only), FlashAttention written in Triton (Tillet's tutorial kernel, MPT's attn_impl:
/// triton), or the newest the GPU runs.
enum class FlashKernel { kNewest, kFa2, kFa3, kTriton };

/// Activation checkpointing (Korthikanti et al. 2022).
enum class Recompute { kNone, kSelective, kFull };

/// The submodules recompute=selective runs again before their backward instead of keeping their
/// activations: Megatron-Core's recompute_modules (transformer_config.py), a bit each. Its default
/// is the attention core alone (Korthikanti's selective recompute).
enum RecomputeModule : unsigned {
  kRecomputeCoreAttn = 1U << 0U,       ///< "core_attn": the s x s scores (normal checkpointing)
  kRecomputeMlaUpProj = 1U << 1U,      ///< "mla_up_proj": latent attention's up projections and RoPE
  kRecomputeLayernorm = 1U << 2U,      ///< "layernorm": the input and pre-MLP norms' outputs
  kRecomputeMlp = 1U << 3U,            ///< "mlp": a dense block's whole MLP (not an MoE block's)
  kRecomputeMoeAct = 1U << 4U,         ///< "moe_act": the routed experts' activation
  kRecomputeSharedExperts = 1U << 5U,  ///< "shared_experts": an MoE block's shared experts
  /// "moe": an MoE block's whole MoE layer checkpointed (router, dispatch, experts, combine, shared
  /// experts), its all-to-alls run again with it (MoELayer's moe_layer_recompute)
  kRecomputeMoe = 1U << 6U,
};

/// Pipeline schedules: GPipe (Huang et al. 2019), 1F1B and interleaved 1F1B (Narayanan et al.
/// 2021), ZB-H1 zero-bubble (Qi et al. 2023).
enum class Schedule { kGpipe, k1F1B, kInterleaved, kZbH1 };

/// How context-parallel ranks exchange the sequence (Megatron-Core's --cp-comm-type):
/// kP2p ring attention (K/V chunks passed around the ring while attention computes, Liu et al.
/// 2023 "Ring Attention"; Megatron-Core's causal load-balanced chunking), kAllGather (K/V of the
/// whole sequence gathered before attention), kA2a (Ulysses: all-to-all from sequence to head
/// shards, Jacobs et al. 2023 "DeepSpeed Ulysses").
enum class ContextComm { kP2p, kAllGather, kA2a };
/// How routed tokens reach their experts (Megatron-core's token dispatchers): an all-to-all over
/// the expert-parallel group, or an all-gather of every token with a reduce-scatter back.
/// Megatron-Core's token dispatchers: alltoall, allgather, and flex (DeepEP or HybridEP kernels,
/// which send a token once to each scale-up domain that hosts one of its experts).
enum class MoeDispatcher { kAllToAll, kAllGather, kFlex };

/// When PyTorch FSDP gathers the next unit in the backward (its BackwardPrefetch): when the
/// current unit's gradient computation starts (BACKWARD_PRE, PyTorch's default) or after it ends
/// (BACKWARD_POST, Composer's default), overlapping only the current unit's reduce-scatter.
enum class FsdpPrefetch { kBackwardPre, kBackwardPost };

/// What a step trains: every weight, or LoRA adapters beside frozen weights (peft=lora).
enum class Peft { kNone, kLora };

/// The linear layers LoRA adapts (lora-targets=), a bit each, named as Megatron-Bridge's LoRA
/// target_modules name them; its default is the transformer block's four.
enum LoraTarget : unsigned {
  kLoraQkv = 1U << 0U,      ///< "qkv": linear_qkv (latent attention's q and kv projections)
  kLoraProj = 1U << 1U,     ///< "proj": linear_proj, the attention output
  kLoraFc1 = 1U << 2U,      ///< "fc1": linear_fc1, the MLP's up (and gate) projection
  kLoraFc2 = 1U << 3U,      ///< "fc2": linear_fc2, the MLP's down projection
  kLoraInProj = 1U << 4U,   ///< "in_proj": a Mamba-2 mixer's input projection
  kLoraOutProj = 1U << 5U,  ///< "out_proj": a Mamba-2 mixer's output projection
  kLoraAllTargets = kLoraQkv | kLoraProj | kLoraFc1 | kLoraFc2,
  kLoraMambaTargets = kLoraInProj | kLoraOutProj,
};

/// The cross-entropy kernels a framework runs on the logits (loss=): Megatron-LM's vocabulary-
/// parallel loss (fp32 max, exp and sum passes), one fused kernel that reads the 16-bit logits
/// (flash-attn's cross_entropy, Liger's), or PyTorch's eager F.cross_entropy on fp32 logits
/// (autocast's fp32 cast, log_softmax, nll_loss: torchtitan, Composer, Hugging Face).
enum class LossKernel { kMegatron, kFused, kEager };

/// How a plan's ranks are numbered, tensor-parallel ranks innermost and context-parallel ranks
/// inside the data-parallel replicas either way (expert-parallel groups fold inside the same):
/// Megatron-Core's default order tp-cp-ep-dp-pp puts the pipeline stages outermost, each stage's
/// GPUs contiguous (parallel_state.py, initialize_model_parallel; torchtitan's device mesh
/// [pp, dp, cp, tp] alike); tp-pp-cp-ep-dp puts them right after the tensor ranks, inside the
/// replicas (Megatron-LM's --use-tp-pp-dp-mapping when cp = 1).
enum class RankOrder { kStagesOutermost, kStagesInsideReplicas };

/// The most that dp x tp x pp x vp x mbs x shard group may reach: 2^30, far beyond any cluster and
/// small enough that every product of these degrees stays an int.
inline constexpr std::int64_t kMaxPlanSpan = std::int64_t{1} << 30;

/// A plan. Degrees equal to 0 are "not given" and are derived by resolve().
/// Ranks are laid out tensor-parallel first (consecutive GPUs, inside a node), then pipeline,
/// then data parallel (stride tp*pp), as Megatron-LM orders them. Context-parallel ranks sit
/// between pipeline and data parallel (stride tp*pp): they hold the same weights and reduce their
/// gradients with the data-parallel ranks, as Megatron's data-parallel-with-cp group does.
struct Plan {
  int dp = 0;  ///< data-parallel degree (replicas, or shards under ZeRO/FSDP)
  int tp = 1;  ///< tensor-parallel degree
  int pp = 1;  ///< pipeline stages
  int vp = 1;  ///< virtual stages (model chunks) per pipeline rank; > 1 only with kInterleaved
  Sharding sharding = Sharding::kDdp;
  int shard_group = 0;             ///< ranks that share one copy of the model state; 0 = dp (all of them)
  bool sequence_parallel = false;  ///< Megatron sequence parallel (needs tp > 1)
  int micro_batch_size = 1;        ///< sequences per micro-batch per rank
  int global_batch = 0;            ///< sequences per optimizer step; 0 = dp * mbs * pp
  int seq_len = 0;                 ///< tokens per sequence; 0 = the workload's
  Precision precision = Precision::kBf16;
  Optimizer optimizer = Optimizer::kAdam;
  Recompute recompute = Recompute::kNone;
  /// RecomputeModule bits recompute=selective applies (recompute-modules=core_attn+mlp); read only
  /// under recompute=selective.
  unsigned recompute_modules = kRecomputeCoreAttn;
  bool recompute_modules_given = false;  ///< the plan named them (printed and checked only then)
  Schedule schedule = Schedule::k1F1B;
  bool flash_attention = false;  ///< fused attention that never stores the s x s scores
  /// Which fused attention kernel; only read when flash_attention is on.
  FlashKernel flash_kernel = FlashKernel::kNewest;
  /// The plan said flash= itself; otherwise commands turn fused attention on where the GPU runs
  /// it (cost::with_default_flash), as every current framework trains.
  bool flash_given = false;
  /// The type data-parallel gradients are reduced in (grad-reduce=fp32|bf16|fp16); none: the
  /// gradients' own type, as PyTorch DDP/FSDP and DeepSpeed reduce them. Megatron-LM reduces its
  /// fp32 main gradients unless --grad-reduce-in-bf16: grad-reduce=fp32.
  std::optional<Precision> grad_reduce;
  /// Tensor-parallel communication overlapped with the GEMMs beside it, in tp chunks (tp-overlap=on:
  /// Megatron-LM/Transformer Engine userbuffers, PyTorch async-TP). Needs sequence parallel.
  bool tp_overlap = false;
  /// Data-parallel gradient buckets reduced while the backward runs (overlap-grad-reduce=on) or
  /// all after it (off, Megatron-LM's default without --overlap-grad-reduce); none: overlapped, as
  /// PyTorch DDP and DeepSpeed do. DDP and ZeRO-1/2 only.
  std::optional<bool> overlap_grad_reduce;
  /// ZeRO-1/2: the updated parameters gathered bucket by bucket beside the next step's first
  /// forward (overlap-param-gather=on, Megatron-LM's --overlap-param-gather) or before it (off;
  /// none: off, as DeepSpeed and Megatron-LM by default).
  std::optional<bool> overlap_param_gather;
  /// FSDP's backward prefetch (fsdp-prefetch=backward-pre|backward-post); given only with
  /// backward regathers (fsdp=full or hybrid).
  FsdpPrefetch fsdp_prefetch = FsdpPrefetch::kBackwardPre;
  bool fsdp_prefetch_given = false;
  /// Context parallel (cp=): each sequence split over cp ranks (Megatron-Core context parallel).
  int cp = 1;
  ContextComm cp_comm = ContextComm::kP2p;
  bool cp_comm_given = false;  ///< cp-comm= was written (refused without cp > 1)
  /// Uneven pipelines: transformer layers of the first / last stage (Megatron's
  /// --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers); 0 = not given,
  /// the other stages share the rest evenly.
  int pp_first_layers = 0;
  int pp_last_layers = 0;
  /// Transformer layers whose saved activations go to host memory during the forward and come
  /// back for the backward (offload-layers=N: Megatron-Core's cpu_offloading with
  /// cpu_offloading_num_layers = N, activations only); 0: none.
  int offload_layers = 0;
  /// Transformer layers at the start and at the end of the stack that run in bf16 under a
  /// low-precision plan (bf16-first-layers=, bf16-last-layers=: Megatron-Core's
  /// first_last_layers_bf16 with num_layers_at_start_in_bf16 / num_layers_at_end_in_bf16,
  /// fp8_utils.is_first_last_bf16_layer over global layer indices); 0: none.
  int bf16_first_layers = 0;
  int bf16_last_layers = 0;
  /// The MTP modules run in bf16 under a low-precision plan (mtp-bf16=on: Megatron-Core's
  /// keep_mtp_spec_in_bf16, which builds them outside the fp8/fp4 autocast).
  bool mtp_bf16 = false;
  /// The embedding and the loss each counted as one layer in the split, so the first and last
  /// stages hold one transformer layer fewer (Megatron's --account-for-embedding-in-pipeline-split
  /// and --account-for-loss-in-pipeline-split; Llama 3, Dubey et al. 2024 section 3.3.2).
  bool pp_embedding_loss_layers = false;
  /// The layers of every virtual stage written out (pp-layout=, Megatron-Core's
  /// --pipeline-model-parallel-layout: "Et*3|(tt|)*29|mL"); empty: not given (layer_map.hpp).
  std::string pp_layout;
  /// order=: how ranks are numbered (Megatron-Core's default unless given).
  RankOrder rank_order = RankOrder::kStagesOutermost;
  /// precision=fp8 only (fp8-recipe=delayed|current): how tensors are scaled.
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;
  bool fp8_recipe_given = false;  ///< the plan said fp8-recipe=, which only precision=fp8 takes
  /// fp8-params=on: the quantized GEMMs' weights are kept in the low-precision format alone (Megatron-
  /// Core's --fp8-param-gather, Transformer Engine's fp8 primary weights), with no 16-bit copy; the
  /// fp32 masters stay in the optimizer and the distributed optimizer gathers them in that format.
  bool fp8_params = false;
  /// Expert parallel (ep=) and expert tensor parallel (etp=; 0 = as tp, Megatron-core's default):
  /// each MoE layer's routed experts are spread over ep ranks and each expert's matrices split
  /// over etp; the same GPUs of a stage fold as tp x cp x dp (dense) = etp x ep x edp (experts).
  int ep = 1;
  int etp = 0;
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  /// Tokens an expert takes at most, over its balanced share (capacity-factor=); none = dropless.
  std::optional<double> capacity_factor;
  /// Tokens of the busiest expert-parallel rank over the mean (moe-imbalance=): it stretches that
  /// rank's expert GEMMs and the all-to-alls the group waits on. 1.0 = balanced: the published
  /// Megatron-Bridge MoE benchmarks "force-balance the token distribution among experts"
  /// (../shared/data/training_runs_megatron_bridge.md), and no published figure gives the imbalance
  /// Megatron-Core's aux-loss top-k router leaves per expert-parallel rank.
  double moe_imbalance = 1.0;
  /// Dispatch and combine overlapped with the other micro-batch's or the shared experts'
  /// compute (moe-overlap=on: DeepSeek-V3's DualPipe, Megatron-core's a2a overlap).
  bool moe_overlap = false;
  /// moe-fused-mlp=on: the routed experts run as Transformer Engine's fused grouped MLP
  /// (ForwardGroupedMLP_CuTeGEMMSwiGLU_MXFP8 and its backward: one CuTe DSL kernel per grouped
  /// GEMM over all local experts, SwiGLU, routing weights and MXFP8 casts in their epilogues), as
  /// Megatron-Bridge's 26.06 MXFP8 MoE presets on Blackwell enable it (cutedsl_fused_grouped_mlp).
  bool moe_fused_mlp = false;
  /// peft=lora: the base weights frozen, rank-`lora_rank` adapters trained on the transformer
  /// blocks' linear layers `lora_targets` names (Megatron-Bridge's LoRA; its defaults, rank 32 on
  /// all four).
  Peft peft = Peft::kNone;
  int lora_rank = 32;
  bool lora_rank_given = false;             ///< lora-rank= was written (refused without peft=lora)
  unsigned lora_targets = kLoraAllTargets;  ///< LoraTarget bits
  bool lora_targets_given = false;          ///< lora-targets= was written (refused without peft=lora)
  /// doc-len=N: each sequence packs documents of N tokens on average, attention within each
  /// (packed sequences; a mask between documents). 0: the sequence is one document.
  int doc_len = 0;
  LossKernel loss = LossKernel::kMegatron;
  bool loss_given = false;  ///< loss= was written (printed only then)
  /// Training metrics evaluated on each micro-batch's logits after its backward, each an eager
  /// fp32 cross-entropy forward over the vocabulary (train-metrics=N: Composer's trainer runs the
  /// model's train metrics, LanguageCrossEntropy and LanguagePerplexity for llm-foundry's MPT).
  int train_metrics = 0;

  /// GPUs used: dp * tp * cp * pp.
  [[nodiscard]] int gpus() const { return dp * tp * cp * pp; }
  /// Ranks that hold the same weights and reduce their gradients together: dp x cp.
  [[nodiscard]] int gradient_ranks() const { return dp * cp; }
  /// Whether the layers are split over the stages unevenly (pp-first-layers=, ...).
  [[nodiscard]] bool uneven_pipeline() const {
    return pp_first_layers > 0 || pp_last_layers > 0 || pp_embedding_loss_layers || !pp_layout.empty();
  }
  /// Micro-batches per step per pipeline: global_batch / (dp * mbs). Precondition: resolved.
  [[nodiscard]] int micro_batches() const { return global_batch / (dp * micro_batch_size); }
  /// Ranks one copy of the sharded state is split over (1 for DDP-like plans).
  [[nodiscard]] int state_shards() const;
  /// 0 (replicated), 1 (optimizer state sharded), 2 (+ gradients), 3 (+ parameters).
  [[nodiscard]] int zero_stage() const;
  [[nodiscard]] bool is_fsdp() const;
  /// Megatron-Core's DistributedDataParallel: zero=1 (its distributed optimizer), or zero=0 with the
  /// type its gradients are reduced in stated (grad-reduce=), as Megatron-LM states it; zero=0
  /// without it is PyTorch's DDP. Its gradient buckets are views into one contiguous buffer.
  [[nodiscard]] bool megatron_ddp() const {
    return sharding == Sharding::kZero1 || (sharding == Sharding::kDdp && grad_reduce.has_value());
  }
  /// The expert tensor-parallel degree in force (etp, or tp when not given).
  [[nodiscard]] int expert_tp() const { return etp > 0 ? etp : tp; }
  /// Expert data parallel: replicas of each expert in a stage, tp * cp * dp / (etp * ep)
  /// (Megatron-Core's parallel_state.py folds cp into the expert groups). Precondition: valid.
  [[nodiscard]] int expert_dp() const { return tp * cp * dp / (expert_tp() * ep); }
  /// Whether any expert setting was given (ep, etp, dispatcher, capacity, imbalance, overlap).
  [[nodiscard]] bool has_expert_settings() const;
};

/// Parses the compact form, e.g. "dp=8,tp=2,pp=4,vp=2,zero=1,mbs=1,recompute=selective,
/// schedule=1f1b,sp=on" or "fsdp=8", "fsdp=full", "fsdp=hybrid:8x4" (shard group 8, 4 replicas).
/// Also accepts gbs=, seq=, precision=, optimizer=, flash=on|off|fa2|fa3|triton. Keys left out keep their
/// defaults; dp may stay 0 to be derived. Throws InputError (file = `origin`) naming the key.
Plan parse_plan(std::string_view text, const std::string& origin = "--plan");

/// Whether `key` is one of the compact form's keys (dp, tp, ..., optimizer), so a caller can tell
/// a setting stepcast does not model from a malformed one.
bool is_plan_key(std::string_view key);

/// Loads a plan from a JSON file with the same keys as the compact form (numbers for degrees,
/// strings for names, true/false for switches). Unknown keys are errors.
Plan load_plan(const std::filesystem::path& file);

/// Fills what was left out: seq_len from the workload, dp = gpu_count / (tp * pp) when it
/// divides (gpu_count = 0 means "no cluster given": dp defaults to 1), shard_group = dp, and
/// global_batch = dp * mbs * pp. Does not check the rules; see problems().
Plan resolve(Plan plan, const workload::Workload& workload, int gpu_count);

/// Every rule the (resolved) plan breaks, each with its numbers; empty if valid.
/// gpu_count = 0 skips the "degrees multiply to the GPU count" rule.
std::vector<Verdict> problems(const Plan& plan, const workload::Workload& workload, int gpu_count);

/// Transformer layers of each pipeline stage (all its model chunks): layers / pp each, or the
/// uneven split the plan asks for (layer_map.hpp has each chunk's). Precondition:
/// pipeline_split_problems() found nothing.
std::vector<int> stage_layers(const Plan& plan, int layers);

/// The rules of the pipeline split of a model of `layers` transformer layers and `mtp_layers` MTP
/// modules (even, pp-first-layers=, pp-last-layers=, pp-embedding-loss-layers=, pp-layout=),
/// appended to `out` with their numbers.
void pipeline_split_problems(const Plan& plan, int layers, int mtp_layers, std::vector<Verdict>& out);

/// The rules a peft=lora plan breaks on `workload` whatever its degrees (a workload without layer
/// shapes, routed experts, a hybrid stack), appended to `out`: search refuses such a model at once.
void fine_tuning_workload_problems(const Plan& plan, const workload::Workload& workload, std::vector<Verdict>& out);

/// The rules of context parallel (cp=, cp-comm=), appended to `out` with their numbers.
void context_parallel_problems(const Plan& plan, const workload::Workload& workload, std::vector<Verdict>& out);

std::string_view to_string(ContextComm c);

/// A plan that breaks rules: an InputError (exit code 2) whose message lists every verdict in
/// words, and which keeps the verdicts for callers that read their codes.
class InvalidPlan : public InputError {
 public:
  InvalidPlan(const std::string& origin, std::vector<Verdict> verdicts);
  [[nodiscard]] const std::vector<Verdict>& verdicts() const { return verdicts_; }

 private:
  std::vector<Verdict> verdicts_;
};

/// "invalid plan: <verdict>" for one verdict; one "  - <verdict>" line each for several.
std::string invalid_plan_message(const std::vector<Verdict>& verdicts);

/// Throws InvalidPlan(origin, all problems) when problems() is not empty.
void validate(const Plan& plan, const workload::Workload& workload, int gpu_count,
              const std::string& origin = "--plan");

/// The compact form of a resolved plan, for reports: "dp=8,tp=2,pp=4,...".
std::string to_string(const Plan& plan);

std::string_view to_string(Precision p);
std::string_view to_string(Optimizer o);
std::string_view to_string(Sharding s);
std::string_view to_string(Recompute r);
/// "core_attn+mlp": Megatron-Core's names of the bits set, in its order.
std::string recompute_modules_text(unsigned modules);
/// The bit of one of Megatron-Core's recompute module names; none for a name it does not know.
std::optional<unsigned> recompute_module(std::string_view name);
/// "qkv+fc2": the lora-targets= names of the LoraTarget bits set.
std::string lora_targets_text(unsigned targets);
std::string_view to_string(Schedule s);
std::string_view to_string(Fp8Recipe r);
std::string_view to_string(MoeDispatcher d);
std::string_view to_string(RankOrder o);
/// Parse the names used by the compact form; InputError(origin) lists the accepted names.
Precision parse_precision(std::string_view name, const std::string& origin);
Optimizer parse_optimizer(std::string_view name, const std::string& origin);

}  // namespace stepcast::plan
