// Typed verdicts: every plan rule has a stable code and a summary, and each verdict reads as the
// sentence stepcast printed before rules had codes. Expected texts are the rules' format strings
// with the plan's numbers filled in by hand (Llama-2 7B: 32 layers, 32 heads and key/value heads,
// ffn 11008, 4096 tokens; Mixtral 8x7B: 8 SwiGLU experts of ffn 14336; DeepSeek-V3: 61 layers, 1 MTP
// module; Nemotron 3 Super: squared-ReLU experts, 2 MTP layers).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace verdict_test {

using namespace stepcast;

namespace {

const workload::Workload& llama2_7b() {
  static const workload::Workload w = workload::load_workload(STEPCAST_SOURCE_DIR "/workloads/llama2-7b.json");
  return w;
}

const workload::Workload& deepseek_v3() {
  static const workload::Workload w = workload::load_workload(STEPCAST_SOURCE_DIR "/workloads/deepseek-v3.json");
  return w;
}

const workload::Workload& seed_7b() {
  static const workload::Workload w = workload::load_workload(STEPCAST_SOURCE_DIR "/workloads/seed-7b.json");
  return w;
}

const workload::Workload& nemotron_super() {
  static const workload::Workload w = workload::load_workload(STEPCAST_SOURCE_DIR "/workloads/nemotron-3-super.json");
  return w;
}

const workload::Workload& nemotron_nano() {
  static const workload::Workload w = workload::load_workload(STEPCAST_SOURCE_DIR "/workloads/nemotron-3-nano.json");
  return w;
}

const workload::Workload& mixtral() {
  static const workload::Workload w = workload::load_workload(STEPCAST_SOURCE_DIR "/workloads/mixtral-8x7b.json");
  return w;
}

struct Case {
  const workload::Workload& (*workload)();
  const char* plan;
  int gpus;
  plan::Rule rule;
  const char* text;
};

// One plan per rule (two where the sentence has two forms), each breaking it with known numbers.
const std::vector<Case>& cases() {
  using R = plan::Rule;
  static const std::vector<Case> all = {
      {llama2_7b, "tp=3", 64, R::kDpDerivable, "the GPU count (64) must be divisible by tp*pp = 3*1 = 3 to derive dp"},
      {llama2_7b, "tp=2,cp=3,flash=on", 64, R::kDpDerivable,
       "the GPU count (64) must be divisible by tp*cp*pp = 2*3*1 = 6 to derive dp"},
      {llama2_7b, "dp=2,tp=2", 8, R::kDegreesMatchGpus, "dp*tp*pp = 2*2*1 = 4 must equal the number of GPUs (8)"},
      {llama2_7b, "dp=2,tp=2,cp=2,flash=on", 16, R::kDegreesMatchGpus,
       "dp*tp*cp*pp = 2*2*2*1 = 8 must equal the number of GPUs (16)"},
      {llama2_7b, "tp=3", 3, R::kTpDividesHeads, "attention heads (32) must be divisible by tp (3)"},
      {llama2_7b, "tp=3", 3, R::kTpDividesKvHeads, "key/value heads (32) must be divisible by tp (3)"},
      {nemotron_nano, "tp=16,ep=1", 16, R::kTpDividesMambaGroups,
       "Mamba-2 groups (8) must be divisible by tp (16): Megatron-Core splits B and C by group"},
      {llama2_7b, "tp=3", 3, R::kTpDividesFfn, "ffn hidden size (11008) must be divisible by tp (3)"},
      {llama2_7b, "pp=3", 3, R::kPpVpDivideLayers, "layers (32) must be divisible by pp*vp = 3*1 = 3"},
      {llama2_7b, "dp=3,gbs=10", 3, R::kDpMbsDivideBatch, "global batch (10) must be divisible by dp*mbs = 3*1 = 3"},
      {llama2_7b, "pp=2,vp=2", 2, R::kVpNeedsInterleaved, "vp=2 needs schedule=interleaved (got schedule=1f1b)"},
      {llama2_7b, "schedule=interleaved", 1, R::kInterleavedNeedsPp, "schedule=interleaved needs pp > 1 (got pp=1)"},
      {llama2_7b, "pp=4,vp=2,schedule=interleaved,gbs=2", 4, R::kInterleavedMicroBatches,
       "schedule=interleaved needs micro-batches (2) divisible by pp (4)"},
      {llama2_7b, "sp=on", 1, R::kSpNeedsTp, "sequence parallel needs tp > 1 (got tp=1)"},
      {llama2_7b, "tp=4,sp=on,seq=4094", 4, R::kTpDividesSeqWithSp,
       "sequence length (4094) must be divisible by tp (4) with sequence parallel"},
      {llama2_7b, "tp=2,tp-overlap=on", 2, R::kTpOverlapNeedsSp,
       "tp-overlap=on needs sequence parallel (sp=on) and tp > 1 (got tp=2, sp=off)"},
      {llama2_7b, "dp=4,fsdp=hybrid:3", 4, R::kHybridGroupDividesDp,
       "dp (4) must be divisible by the hybrid shard group (3)"},
      {llama2_7b, "fp8-recipe=current", 1, R::kFp8RecipeNeedsFp8,
       "fp8-recipe= chooses the per-tensor scaling of precision=fp8 and applies to nothing else (got precision=bf16)"},
      {llama2_7b, "pp=2,pp-first-layers=8,pp-embedding-loss-layers=on", 2, R::kUnevenSplitExclusive,
       "give one of pp-first-layers=/pp-last-layers=, pp-embedding-loss-layers=on and pp-layout= (Megatron-Core "
       "refuses the combinations)"},
      {llama2_7b, "pp-first-layers=8", 1, R::kUnevenSplitNeedsPp,
       "an uneven pipeline split (pp-first-layers=, pp-last-layers=, pp-embedding-loss-layers=) needs pp > 1 (got "
       "pp=1)"},
      // 32 - 5 - 7 = 20 layers over the two middle stages, 10 each: only the first and last
      // stages' counts break vp=2.
      {llama2_7b, "pp=4,vp=2,schedule=interleaved,pp-first-layers=5,pp-last-layers=7,gbs=8", 4, R::kStageLayersDivideVp,
       "the layers of the first stage (5) must be divisible by vp (2): Megatron-Core builds vp equal model chunks per "
       "stage"},
      {llama2_7b, "pp=5,pp-embedding-loss-layers=on", 5, R::kEmbeddingLossSplit,
       "with pp-embedding-loss-layers=on, layers + 2 (embedding and loss) = 32 + 2 = 34 must be divisible by pp (5)"},
      {llama2_7b, "pp=2,pp-layout=Et*16|t*16|L", 2, R::kPpLayoutStages,
       "pp-layout= names 3 virtual stages; it must name pp x vp = 2 x 1 = 2 (split by '|')"},
      {llama2_7b, "pp=2,pp-layout=Et*16|t*15L", 2, R::kPpLayoutDecoders,
       "pp-layout= places 31 transformer layers (t); the model has 32"},
      {llama2_7b, "pp=3,pp-layout=Et*16||t*16L", 3, R::kPpLayoutEmptyStage,
       "pp-layout= leaves pipeline stage 1 without a layer in any of its chunks"},
      {llama2_7b, "pp=2,pp-layout=t*16|Et*16L", 2, R::kPpLayoutEnds,
       "pp-layout= must begin with the embedding (E) and end with the loss (L) (Megatron-Core's "
       "validate_layer_layout)"},
      // DeepSeek-V3: 61 layers and one MTP module.
      {deepseek_v3, "pp=2,pp-layout=Et*30|t*31L", 2, R::kPpLayoutMtp,
       "pp-layout= places 0 MTP modules (m); the model has 1"},
      {deepseek_v3, "pp=2,pp-layout=Et*30m|t*31L", 2, R::kPpLayoutMtpPlace,
       "pp-layout= must place the 1 MTP module(s) (m) in its last virtual stage, beside the loss: stepcast runs them "
       "on the last stage"},
      {llama2_7b, "pp=2,pp-first-layers=10,pp-last-layers=10", 2, R::kUnevenSplitNoOtherStage,
       "layers (32) - pp-first-layers (10) - pp-last-layers (10) = 12 must be 0: pp=2 leaves no other stage to hold "
       "them"},
      {llama2_7b, "pp=4,pp-first-layers=7", 4, R::kUnevenSplitRestDivides,
       "layers (32) - pp-first-layers (7) - pp-last-layers (0) = 25 must be divisible by the other 3 stages, at least "
       "1 layer each"},
      {llama2_7b, "cp-comm=a2a", 1, R::kCpCommNeedsCp, "cp-comm= needs context parallel (cp > 1, got cp=1)"},
      {llama2_7b, "cp=2", 2, R::kCpNeedsFlash,
       "cp=2 needs fused attention (flash=on): Megatron-Core's context parallel runs in Transformer Engine's fused "
       "attention"},
      {llama2_7b, "cp=2,flash=on,fsdp=hybrid:2", 4, R::kCpWithHybridShard,
       "cp=2 with fsdp=hybrid is not modelled: shard over the data-parallel-with-cp group with zero= or fsdp=full"},
      {llama2_7b, "cp=3,cp-comm=a2a,flash=on", 3, R::kCpDividesSeq,
       "sequence length (4096) must be divisible by cp (3)"},
      {llama2_7b, "cp=3,flash=on", 3, R::kTwoCpDividesSeq,
       "sequence length (4096) must be divisible by 2*cp = 6 (cp-comm=p2p splits it into 2 x cp load-balanced "
       "chunks)"},
      {llama2_7b, "tp=4,sp=on,cp=2,flash=on,seq=4100", 8, R::kCpTokensDivideTp,
       "with sequence parallel, each context-parallel rank's tokens seq/cp = 4100/2 = 2050 must be divisible by tp "
       "(4)"},
      {llama2_7b, "cp=3,cp-comm=a2a,flash=on", 3, R::kA2aHeadsDivideTpCp,
       "cp-comm=a2a needs attention heads (32) divisible by tp*cp = 1*3 = 3"},
      {llama2_7b, "cp=3,cp-comm=a2a,flash=on", 3, R::kA2aKvHeadsDivideTpCp,
       "cp-comm=a2a needs key/value heads (32) divisible by tp*cp = 1*3 = 3"},
      {nemotron_nano, "cp=3,flash=on", 3, R::kCpDividesMambaHeads,
       "cp=3 needs each tensor rank's Mamba-2 heads (64 / tp 1 = 64) divisible by cp: Megatron-Core gives each "
       "context-parallel rank the whole sequence for heads / (tp x cp) of them"},
      {nemotron_nano, "cp=3,flash=on", 3, R::kCpSplitsMambaGroups,
       "cp=3 and each tensor rank's Mamba-2 groups (8 / tp 1 = 8) must divide one another: Megatron-Core splits the "
       "groups over the context-parallel ranks, or repeats each over cp / groups of them"},
      {llama2_7b, "ep=2", 1, R::kExpertSettingsNeedMoe,
       "expert settings (ep=2) need a workload with routed experts; llama2-7b has none"},
      {llama2_7b, "ep=2,etp=1", 1, R::kExpertSettingsNeedMoe,
       "expert settings (ep=2, etp=1) need a workload with routed experts; llama2-7b has none"},
      {mixtral, "fsdp=hybrid:2", 4, R::kMoeWithHybridShard,
       "fsdp-hybrid with routed experts is not modelled: shard an MoE model over all of dp (fsdp=full, fsdp=grad-op or "
       "zero=3), whose experts shard over the expert data-parallel group"},
      {mixtral, "tp=2,fsdp=full", 2, R::kMoeShardingNeedsDp,
       "fsdp-full with routed experts needs dp > 1: the dense layers shard over dp (got dp=1)"},
      {mixtral, "dp=3,ep=3", 3, R::kEpDividesExperts, "routed experts (8) must be divisible by ep (3)"},
      {mixtral, "tp=2,etp=1,sp=on", 2, R::kEtpNeedsEp,
       "etp=1 without expert parallel (ep=1): etp splits the experts of an expert-parallel group; give ep > 1, or "
       "leave etp out to split experts as tp=2 does"},
      {mixtral, "dp=6,ep=2,etp=3", 6, R::kEtpDividesExpertFfn, "expert ffn size (14336) must be divisible by etp (3)"},
      {mixtral, "dp=2,ep=4", 2, R::kExpertFolding,
       "expert and dense layers must fold the same GPUs of a stage: dense tp x cp x dp = 1 x 1 x 2 = 2 must be "
       "divisible by etp x ep = 1 x 4 = 4 (Megatron-core's parallel folding)"},
      {mixtral, "cp=2,ep=4,flash=on", 2, R::kExpertFolding,
       "expert and dense layers must fold the same GPUs of a stage: dense tp x cp x dp = 1 x 2 x 1 = 2 must be "
       "divisible by etp x ep = 1 x 4 = 4 (Megatron-core's parallel folding)"},
      {mixtral, "tp=2,ep=2", 4, R::kTpWithEpNeedsSp,
       "tp=2 with ep=2 needs sequence parallel (sp=on), as Megatron-LM requires"},
      {mixtral, "dp=2,ep=2,moe-imbalance=2.5", 2, R::kImbalanceWithinEp,
       "moe-imbalance (2.5) cannot exceed ep (2): the busiest rank gets at most every token"},
      {mixtral, "moe-overlap=on", 1, R::kMoeOverlapNeedsAllToAll,
       "moe-overlap=on overlaps the dispatch and combine all-to-alls: it needs ep > 1 and moe-dispatcher=alltoall "
       "or flex (got ep=1, moe-dispatcher=alltoall)"},
      // Megatron-Core's checks of overlap_moe_expert_parallel_comm (TransformerConfig.__post_init__).
      {mixtral, "pp=2,dp=2,ep=2,moe-overlap=on", 4, R::kMoeOverlapNeedsVirtualPipeline,
       "moe-overlap=on with pp=2 needs a virtual pipeline (vp > 1 with schedule=interleaved, or a pp-layout=): "
       "Megatron-Core pairs forwards with backwards in the interleaved schedule only"},
      {mixtral, "dp=2,ep=2,moe-overlap=on,recompute=full", 2, R::kMoeOverlapWithFullRecompute,
       "moe-overlap=on cannot run with recompute=full: Megatron-Core disables full recomputation under its EP "
       "all-to-all overlap (choose recompute=selective or none)"},
      {mixtral, "dp=2,ep=2,moe-overlap=on,recompute=selective,recompute-modules=moe", 2, R::kMoeOverlapWithMoeRecompute,
       "moe-overlap=on cannot recompute the moe module: it runs the dispatch the overlap schedules again "
       "(Megatron-Core refuses recompute-modules with moe under its EP all-to-all overlap)"},
      {nemotron_super, "dp=8,ep=8,moe-overlap=on", 8, R::kMoeOverlapWithMtpLayers,
       "moe-overlap=on runs at most one MTP layer (Megatron-Core: mtp_num_layers None or 1); the workload has 2"},
      {mixtral, "dp=2,ep=2,moe-overlap=on,precision=fp32", 2, R::kMoeOverlapNeeds16Bit,
       "moe-overlap=on needs a 16-bit model (bf16, fp16, or fp8 and the block-scaled formats over one), as "
       "Megatron-Core requires (got precision=fp32)"},
      {mixtral, "dp=2,ep=2,moe-fused-mlp=on", 2, R::kMoeFusedMlpNeedsMxfp8,
       "moe-fused-mlp=on runs Transformer Engine's fused grouped MLP, which takes MXFP8 operands only "
       "(precision=mxfp8; got precision=bf16)"},
      {nemotron_super, "dp=8,ep=8,precision=mxfp8,moe-fused-mlp=on", 8, R::kMoeFusedMlpNeedsSwiglu,
       "moe-fused-mlp=on fuses a SwiGLU between the experts' grouped GEMMs; nemotron-3-super cannot run it: its "
       "experts are not gated (no SwiGLU)"},
      {mixtral, "dp=2,ep=2,precision=mxfp8,moe-fused-mlp=on,recompute=selective,recompute-modules=moe_act", 2,
       R::kMoeFusedMlpWithMoeActRecompute,
       "moe-fused-mlp=on runs the experts' activation inside the grouped GEMM: the moe_act recompute module has no "
       "kernel of its own to run again (drop moe_act from recompute-modules=)"},
      {llama2_7b, "overlap-grad-reduce=on", 1, R::kGradReduceNeedsDp,
       "overlap-grad-reduce=on needs data parallel: dp x cp > 1 ranks reducing gradients (got dp=1, cp=1)"},
      {llama2_7b, "zero=3,overlap-grad-reduce=on", 2, R::kGradReduceWithLayerwise,
       "overlap-grad-reduce=on chooses when DDP's or ZeRO-1/2's gradient buckets are reduced; ZeRO-3 reduces each "
       "layer's gradients as its backward ends"},
      {llama2_7b, "fsdp=full,overlap-grad-reduce=off", 2, R::kGradReduceWithLayerwise,
       "overlap-grad-reduce=off chooses when DDP's or ZeRO-1/2's gradient buckets are reduced; FSDP reduces each "
       "layer's gradients as its backward ends"},
      {llama2_7b, "zero=2,overlap-grad-reduce=off", 2, R::kGradReduceOffWithZero2,
       "overlap-grad-reduce=off with zero=2: ZeRO-2 frees each micro-batch's gradients by reducing them as the "
       "backward produces them; use zero=1 (Megatron's distributed optimizer) to reduce once after the backward"},
      {llama2_7b, "overlap-param-gather=on", 2, R::kParamGatherNeedsShardedOptimizer,
       "overlap-param-gather=on needs a sharded optimizer whose updated parameters are gathered after the step: zero=1 "
       "or zero=2 (Megatron's distributed optimizer); a replicated optimizer has none to gather"},
      {llama2_7b, "fsdp=full,overlap-param-gather=off", 2, R::kParamGatherNeedsShardedOptimizer,
       "overlap-param-gather=off needs a sharded optimizer whose updated parameters are gathered after the step: "
       "zero=1 "
       "or zero=2 (Megatron's distributed optimizer); FSDP/ZeRO-3, which gathers every layer anyway, has none to "
       "gather"},
      {llama2_7b, "zero=1,overlap-grad-reduce=off,overlap-param-gather=on", 2, R::kParamGatherNeedsGradOverlap,
       "overlap-param-gather=on needs the gradient reduction overlapped too (overlap-grad-reduce=on), as Megatron-LM "
       "requires"},
      {llama2_7b, "fsdp=grad-op,fsdp-prefetch=backward-post", 2, R::kFsdpPrefetchNeedsRegather,
       "fsdp-prefetch= chooses when PyTorch FSDP gathers a unit again for its backward: fsdp=full or fsdp=hybrid (got "
       "fsdp-grad-op, which gathers none)"},
      {llama2_7b, "lora-targets=qkv+fc2", 1, R::kLoraTargetsNeedLora,
       "lora-targets=qkv+fc2 needs peft=lora: the targets are the layers adapters are added to"},
      {llama2_7b, "lora-rank=16", 1, R::kLoraRankNeedsLora,
       "lora-rank=16 needs peft=lora: the rank is the adapters' inner size"},
      {llama2_7b, "zero=3,peft=lora", 2, R::kLoraWithShardedWeights,
       "peft=lora with zero=3 is not modelled: stepcast prices LoRA as Megatron-Bridge runs it, frozen weights "
       "replicated over dp and the adapters under DDP or the distributed optimizer (zero=0, 1 or 2)"},
      {mixtral, "peft=lora", 1, R::kLoraWithRoutedExperts,
       "peft=lora with routed experts (mixtral-8x7b) is not modelled: stepcast's adapters cover dense transformer "
       "layers only"},
      {llama2_7b, "precision=nvfp4,fp8-params=on", 1, R::kFp8ParamsNeedFp8,
       "fp8-params=on keeps the weights in fp8 or mxfp8 (Megatron-Core's --fp8-param-gather); precision=nvfp4 has no "
       "such weights"},
      {llama2_7b, "recompute=full,recompute-modules=mlp", 1, R::kRecomputeModulesNeedSelective,
       "recompute-modules= names what recompute=selective runs again (Megatron-Core reads recompute_modules only "
       "with recompute_granularity=selective); this plan has recompute=full"},
      {llama2_7b, "peft=lora,lora-targets=qkv+in_proj", 1, R::kLoraMambaTargetsNeedMamba,
       "lora-targets= names in_proj (a Mamba-2 mixer's projections); llama2-7b has no Mamba-2 layer"},
      // optimizer=muon: Newton-Schulz on whole (tensor-parallel shard) matrices, not LoRA's adapters.
      {llama2_7b, "zero=3,optimizer=muon", 2, R::kMuonWithShardedWeights,
       "optimizer=muon with zero=3 is not modelled: Newton-Schulz needs each weight matrix's whole gradient, which "
       "sharded weights first gather over the data-parallel ranks"},
      {llama2_7b, "peft=lora,optimizer=muon", 1, R::kMuonWithLora,
       "optimizer=muon with peft=lora is not modelled: Megatron-Bridge trains LoRA adapters with Adam"},
      {seed_7b, "optimizer=muon", 1, R::kMuonNeedsShape,
       "optimizer=muon needs the model's layer shapes for its weight matrices; seed-7b gives a parameter count "
       "only"},
      // Packed sequences: documents shorter than their sequence, in the fused kernels, without cp.
      {llama2_7b, "seq=4096,doc-len=8192", 1, R::kDocLenAboveSeq,
       "doc-len=8192 exceeds seq=4096: a packed document fits in its sequence"},
      {llama2_7b, "flash=off,doc-len=256", 1, R::kDocLenNeedsFlash,
       "doc-len=256 needs flash attention: packed sequences run in the fused attention kernels (flash=on)"},
      {llama2_7b, "cp=2,flash=on,doc-len=256", 2, R::kDocLenWithCp,
       "doc-len=256 with cp=2 is not modelled: stepcast splits whole sequences over context-parallel ranks, not the "
       "documents of a pack"},
      // Megatron-Core's TransformerConfig rules on cpu_offloading (Llama 2 7B has 32 layers).
      {llama2_7b, "offload-layers=32", 1, R::kOffloadBelowLayers,
       "offload-layers (32) must be fewer than the model's transformer layers (32): Megatron-Core offloads "
       "cpu_offloading_num_layers < num_layers"},
      {llama2_7b, "pp=2,offload-layers=8", 2, R::kOffloadNeedsNoPipeline,
       "offload-layers= needs pp=1 (got pp=2): Megatron-Core has no activation offload with pipeline parallelism"},
      {llama2_7b, "recompute=selective,offload-layers=8", 1, R::kOffloadNeedsNoRecompute,
       "offload-layers= needs recompute=none (got recompute=selective): Megatron-Core does not offload activations "
       "together with recomputation"},
      // Megatron-Core's first_last_layers_bf16 (fp8_utils.get_fp8_context; Llama 2 7B has 32 layers).
      {llama2_7b, "bf16-last-layers=4", 1, R::kBf16LayersNeedLowPrecision,
       "bf16-first-layers=, bf16-last-layers= and mtp-bf16= need precision=fp8, mxfp8 or nvfp4 (got precision=bf16): "
       "they keep layers out of the quantized GEMMs, and a bf16 plan has none"},
      {llama2_7b, "precision=mxfp8,mtp-bf16=on", 1, R::kMtpBf16NeedsMtp,
       "mtp-bf16=on keeps the MTP modules in bf16, and llama2-7b has none (its workload gives no \"mtp_layers\")"},
      {llama2_7b, "precision=nvfp4,bf16-first-layers=16,bf16-last-layers=16", 1, R::kBf16LayersBelowLayers,
       "bf16-first-layers (16) + bf16-last-layers (16) must be fewer than the model's transformer layers (32): "
       "otherwise no layer runs in the plan's precision"},
      {llama2_7b, "precision=fp8,bf16-last-layers=1", 1, R::kBf16LayersNotDelayed,
       "bf16-first-layers= and bf16-last-layers= need fp8-recipe=current with precision=fp8: Megatron-Core refuses "
       "them with delayed scaling (\"Delayed scaling does not support first / last layer in BF16\")"},
      {seed_7b, "peft=lora", 1, R::kLoraNeedsShape,
       "peft=lora needs the model's layer shapes to size its adapters; seed-7b gives a parameter count only"},
      // Range limits: 2^27-token sequences, 2^36 tokens per step, 2^16 micro-batches per step.
      {llama2_7b, "dp=1,gbs=1,seq=134217729", 1, R::kSequenceLimit,
       "the sequence length 134217729 is above stepcast's limit of 134217728 tokens"},
      {llama2_7b, "dp=1,gbs=1048577,seq=65536", 1, R::kTokensPerStepLimit,
       "global batch x sequence = 1048577 x 65536 = 68719542272 tokens per step is above stepcast's limit of "
       "68719476736 (2^36), thousands of times the largest published batch"},
      {llama2_7b, "dp=1,mbs=1,gbs=65537,seq=4096", 1, R::kMicroBatchLimit,
       "global batch / (dp x mbs) = 65537 / (1 x 1) = 65537 micro-batches per step is above stepcast's limit of "
       "65536: raise mbs= or dp=, or lower the global batch"},
  };
  return all;
}

}  // namespace

TEST_SUITE("plan.verdict") {
  TEST_CASE("each rule's verdict reads as its sentence with the plan's numbers") {
    for (const Case& c : cases()) {
      CAPTURE(c.plan);
      const workload::Workload& w = c.workload();
      const auto found = plan::problems(plan::resolve(plan::parse_plan(c.plan), w, c.gpus), w, c.gpus);
      const auto it =
          std::find_if(found.begin(), found.end(), [&](const plan::Verdict& v) { return v.rule == c.rule; });
      REQUIRE_MESSAGE(it != found.end(), "no verdict ", plan::rule_code(c.rule));
      CHECK(plan::describe(*it) == c.text);
    }
  }

  TEST_CASE("every rule of plan::problems() has a case above, and the planner's two are tested in planner.search") {
    std::set<plan::Rule> covered = {plan::Rule::kTpWithinNode, plan::Rule::kFitsGpuMemory};
    for (const Case& c : cases()) covered.insert(c.rule);
    for (const plan::Rule rule : plan::all_rules()) {
      CAPTURE(plan::rule_code(rule));
      CHECK(covered.count(rule) == 1);
    }
  }

  TEST_CASE("codes and summaries are unique, codes are lower-case words joined by hyphens") {
    std::set<std::string_view> codes;
    std::set<std::string_view> summaries;
    for (const plan::Rule rule : plan::all_rules()) {
      const std::string_view code = plan::rule_code(rule);
      CHECK(codes.insert(code).second);
      CHECK(summaries.insert(plan::rule_summary(rule)).second);
      CHECK(std::all_of(code.begin(), code.end(),
                        [](char ch) { return (ch >= 'a' && ch <= 'z') || ch == '-' || (ch >= '0' && ch <= '9'); }));
    }
    CHECK(plan::rule_code(plan::Rule::kTpDividesHeads) == "tp-divides-heads");
    CHECK(plan::rule_summary(plan::Rule::kTpDividesHeads) == "attention heads must be divisible by tp");
  }

  TEST_CASE("a verdict's values are read by name and type") {
    const plan::Verdict v{plan::Rule::kImbalanceWithinEp, {{"imbalance", 2.5}, {"ep", 2}}};
    CHECK(v.ratio("imbalance") == 2.5);
    CHECK(v.number("ep") == 2);
    CHECK_THROWS_AS((void)v.number("imbalance"), InternalError);  // a ratio is not a whole number
    CHECK_THROWS_AS((void)v.text("workload"), InternalError);
  }

  TEST_CASE("the memory verdict reads as the planner printed it: over the GPU, or inside the margin") {
    // 48 GiB on a 40 GiB GPU: 8 GiB more. 38 GiB: 2 GiB left, inside a 4 GiB margin.
    constexpr double gib = 1024.0 * 1024.0 * 1024.0;
    const plan::Verdict over{plan::Rule::kFitsGpuMemory,
                             {{"needed_bytes", 48 * gib},
                              {"headroom_bytes", -8 * gib},
                              {"capacity_bytes", 40 * gib},
                              {"margin_bytes", 4 * gib}}};
    CHECK(plan::describe(over) == "needs 48.00 GiB per GPU, 8.00 GiB more than the 40.00 GiB of the GPU");
    const plan::Verdict margin{plan::Rule::kFitsGpuMemory,
                               {{"needed_bytes", 38 * gib},
                                {"headroom_bytes", 2 * gib},
                                {"capacity_bytes", 40 * gib},
                                {"margin_bytes", 4 * gib}}};
    CHECK(plan::describe(margin) ==
          "needs 38.00 GiB per GPU, leaving 2.00 GiB of the 40.00 GiB of the GPU: inside the margin of 4.00 GiB");
  }
}

}  // namespace verdict_test
