// The kernels of one training step, listed once: every operator of a transformer layer (and of
// the embedding, the output layer and loss, and the optimizer) with its sharded shape, FLOPs,
// bytes moved and the tensors it keeps for the backward. Compute time, activation memory and the
// simulator's task durations are all derived from this one list.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/plan/layer_map.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::cost {

/// Which part of the model an operator belongs to.
enum class OpPart { kLayer, kEmbedding, kHead, kOptimizer };

/// When it runs: the forward, the backward's data-gradient kernels (and every backward kernel
/// that is not a weight gradient), the weight-gradient GEMMs, or the forward again under
/// activation recompute.
enum class OpPass { kForward, kBackward, kWeightGrad, kRecompute };

/// What bounds it and how it is timed: a (batched) GEMM on the tensor cores, a fused attention
/// kernel (FlashAttention), or a memory-bound kernel (element-wise, normalisation, reduction).
enum class OpKind { kGemm, kFusedAttention, kMemory };

/// A GEMM C[M,N] = A[M,K] B[K,N], `batch` times; for fused attention: batch = sequences x heads
/// on this rank, m = queries, n = keys, k = head dimension.
struct GemmShape {
  double batch = 1.0;
  double m = 0.0;
  double n = 0.0;
  double k = 0.0;
};

/// One kernel (or a few fused kernels) of one micro-batch on one GPU.
struct Operator {
  std::string_view name;  ///< "qkv projection", "softmax", ...: static strings
  OpPart part = OpPart::kLayer;
  OpPass pass = OpPass::kForward;
  OpKind kind = OpKind::kMemory;
  GemmShape gemm;  ///< GEMMs and fused attention
  /// Fused attention: the matmul work of a score in head dimensions, the mean of the query-key
  /// and value heads' (d under multi-head attention; (192 + 128) / 2 under DeepSeek's MLA).
  double head_dim = 0.0;
  double elements = 0.0;  ///< memory-bound kernels: elements of the largest tensor touched
  Flops flops;            ///< executed (causal attention counts the half it computes)
  Bytes bytes;            ///< read + written in HBM
  Bytes saved;            ///< forward operators: activation bytes kept for the backward
  double kernels = 1.0;   ///< launches
  /// Framework calls that launch them, where fewer than `kernels`: a grouped expert GEMM is one
  /// call whose C++ loop launches a GEMM per expert (the host pays per call, the GPU per kernel).
  std::optional<double> host_calls;
  /// A GEMM run in the plan's fp8/mxfp8/nvfp4 format (a transformer layer's linear GEMMs under
  /// such a plan); every other GEMM of a low-precision plan runs in bf16 (low_precision.hpp).
  bool low_precision = false;
  /// A LoRA adapter's GEMM (peft=lora): its forward GEMMs' k x n are the adapter's weights.
  bool adapter = false;
  /// The plan::RecomputeModule a forward operator belongs to (0: none); recompute=selective runs
  /// the operators of its modules again before the backward.
  unsigned recompute_module = 0;
};

/// Which kind of layer: a transformer block or a hybrid's sublayer (Mamba-2, attention, MLP),
/// with routed experts or the dense MLP, with a sliding-window or full attention. A dense
/// transformer without windows has one kind.
struct LayerKind {
  bool moe = false;
  bool sliding = false;
  workload::Block block = workload::Block::kTransformer;
  /// Kept out of a low-precision plan's quantized GEMMs (bf16-first-layers=, bf16-last-layers=).
  bool bf16 = false;
  friend bool operator==(const LayerKind&, const LayerKind&) = default;
  /// Whether the layer holds attention (a transformer block or a hybrid's attention layer).
  [[nodiscard]] bool has_attention() const {
    return block == workload::Block::kTransformer || block == workload::Block::kAttention;
  }
  /// Whether the layer holds an MLP or routed experts (a transformer block or a hybrid's MLP layer).
  [[nodiscard]] bool has_mlp() const {
    return block == workload::Block::kTransformer || block == workload::Block::kMlp;
  }
  /// The fixed order kinds are listed in: transformer, Mamba, attention, MLP; dense before MoE,
  /// full before sliding, quantized before bf16.
  friend bool operator<(const LayerKind& a, const LayerKind& b) {
    return std::tuple(a.block, a.moe, a.sliding, a.bf16) < std::tuple(b.block, b.moe, b.sliding, b.bf16);
  }
};

/// What a low-precision plan keeps in bf16: the first `first` and the last `last` layers of the
/// stack by global index (Megatron-Core's is_first_last_bf16_layer), and the MTP modules.
struct Bf16Layers {
  int first = 0;
  int last = 0;
  bool mtp = false;
  /// Whether any layer of the stack is kept.
  [[nodiscard]] bool any_layer() const { return first + last > 0; }
};

/// What the plan keeps in bf16 (nothing unless its precision is a quantized one).
Bf16Layers bf16_layers(const plan::Plan& plan);

/// Whether every layer of the stack is one kind: dense, without sliding windows, a hybrid pattern
/// or layers kept in bf16 (the planner's common case, asked for every stage of every candidate).
bool one_layer_kind(const workload::TransformerShape& shape, Bf16Layers bf16);

/// How many layers of each kind the `count` layers from layer `first` on are: DeepSeek-V3's
/// first dense layers by their index; sliding-window layers spread evenly (GPT-OSS alternates
/// them); a hybrid's by its pattern; the plan's bf16 layers by their index. Kinds with no layer
/// are left out, in LayerKind's order.
std::vector<std::pair<LayerKind, int>> layer_kinds(const workload::TransformerShape& shape, int first, int count,
                                                   Bf16Layers bf16 = {});

/// The same over all the model chunks of a pipeline stage, each holding the layers the layer map
/// gives it (Megatron-Core's placement: so DeepSeek-V3's dense layers sit on the first stage).
std::vector<std::pair<LayerKind, int>> stage_layer_kinds(const workload::TransformerShape& shape,
                                                         const plan::LayerMap& map, int stage, Bf16Layers bf16 = {});

/// The expert-parallel layout of an MoE block, resolved from a plan.
struct ExpertContext {
  double ep = 1.0;   ///< expert-parallel degree
  double etp = 1.0;  ///< expert tensor-parallel degree
  /// Rows of the busiest rank's expert GEMMs over the balanced share: the imbalance, capped by
  /// the capacity factor when tokens are dropped.
  double load_factor = 1.0;
  /// The all-to-all dispatcher: the rows a rank receives come in blocks by source rank and are
  /// sorted by local expert before the experts, and back after them (Megatron-Core's
  /// sort_chunks_by_idxs); the flex dispatcher delivers them by expert.
  bool regroups_by_expert = false;
  /// Transformer Engine's fused grouped MLP (plan moe-fused-mlp=on): each grouped GEMM one kernel
  /// over every local expert, the activation and the casts between the GEMMs in their epilogues.
  bool fused_mlp = false;
};

/// The settings an operator list depends on, resolved from a plan.
struct OperatorContext {
  double micro_batch = 1.0;  ///< b: sequences per micro-batch
  double seq = 0.0;          ///< s: tokens per sequence
  double tp = 1.0;           ///< t: tensor-parallel degree
  bool sequence_parallel = false;
  bool flash = false;             ///< fused attention (never materialises the s x s scores)
  double activation_bytes = 2.0;  ///< bytes of one activation element (2 in mixed precision)
  plan::Recompute recompute = plan::Recompute::kNone;
  unsigned recompute_modules = plan::kRecomputeCoreAttn;  ///< plan::RecomputeModule bits, under kSelective
  double cp = 1.0;  ///< context-parallel degree: each rank holds s/cp tokens of every sequence
  /// doc-len=: tokens of each document packed into a sequence, attention within each; 0 = s.
  double doc_len = 0.0;
  plan::ContextComm cp_comm = plan::ContextComm::kP2p;
  /// fp8, mxfp8 or nvfp4: the layers' linear GEMMs run quantized, with quantize kernels before them.
  plan::Precision precision = plan::Precision::kBf16;
  plan::Fp8Recipe fp8_recipe = plan::Fp8Recipe::kDelayed;
  /// The GPU's FP8 GEMMs take any layout: one per-tensor fp8 copy (fp8_gemm_any_layout).
  bool fp8_any_layout = false;
  /// peft=lora: the adapters' rank; the weights are frozen (no weight gradients) and the linear
  /// layers of a transformer block that `lora_targets` names gain adapters. 0: every weight trains.
  double lora_rank = 0.0;
  unsigned lora_targets = plan::kLoraAllTargets;        ///< the linears with adapters (plan::LoraTarget bits)
  plan::LossKernel loss = plan::LossKernel::kMegatron;  ///< the cross-entropy's kernels (head_operators)
  double train_metrics = 0.0;  ///< eager fp32 cross-entropies a micro-batch's metrics run on its logits
  LayerKind kind;              ///< which kind of block layer_operators lists
  ExpertContext experts;       ///< MoE blocks only
};

OperatorContext operator_context(const plan::Plan& plan);

/// What one query of fused attention reaches under the causal mask: its document, `document`
/// tokens (the sequence, or a packed document of doc-len= tokens), and within it `window` keys
/// back (a sliding window, else the document).
struct CausalSpan {
  double document = 0.0;
  double window = 0.0;
  /// Keys a query meets on average: (n w - w^2/2) / n for a document of n tokens.
  [[nodiscard]] double keys_per_query() const { return (document * window - 0.5 * window * window) / document; }
};

/// The span of a sequence of `seq` tokens packing documents of `doc_len` tokens (0: one document)
/// under a sliding window of `window` keys (0: none).
CausalSpan causal_span(double seq, double window, double doc_len);

/// causal_span(seq, window, doc_len).keys_per_query().
double causal_keys_per_query(double seq, double window, double doc_len);

/// Whether recompute=selective runs `module` (a plan::RecomputeModule) again in this context.
bool recomputes(const OperatorContext& ctx, unsigned module);

/// Tokens one GPU routes per micro-batch, the rows of its router and of the copies it dispatches
/// (top-k each): its own b s / cp tokens, split again over tp under sequence parallel
/// (moe_operators.cpp cites Megatron-Core). Every MoE cost (operators, dispatch bytes, buffers)
/// starts from it.
double routed_tokens_per_gpu(const OperatorContext& ctx);

/// Routed tokens (token x expert pairs) one GPU's expert GEMMs take per micro-batch, with the
/// load factor: etp x (b s / (cp tp)) x top-k x load factor (moe_operators.cpp derives it).
double expert_rows_per_gpu(const workload::TransformerShape& shape, const OperatorContext& ctx);

/// The MLP part of an MoE block (router, dispatch permute, grouped expert GEMMs, combine, shared
/// experts), appended to the forward and (unreversed) backward lists of layer_operators.
void append_moe_mlp(const workload::TransformerShape& shape, const OperatorContext& ctx, std::vector<Operator>& forward,
                    std::vector<Operator>& backward);

/// The operators of one transformer layer for one micro-batch: forward, backward (data and
/// weight gradients) and, under activation recompute, the forward kernels it repeats
/// (full: all of them; selective: the recompute modules', by default the attention core,
/// Korthikanti et al. 2022 section 4.2.2).
/// The `saved` bytes of the forward operators add up to Korthikanti et al.'s per-layer
/// activations (Table 2, 34sbh + 5as^2b for a GPT layer without recompute).
std::vector<Operator> layer_operators(const workload::TransformerShape& shape, const OperatorContext& ctx);

/// Token (and learned position) embedding of the first pipeline stage, forward and backward.
std::vector<Operator> embedding_operators(const workload::TransformerShape& shape, const OperatorContext& ctx);

/// Bytes the loss keeps per logit for its backward (the `saved` of head_operators' cross-entropy):
/// the fp32 softmax of Megatron's and of PyTorch's eager loss, the 16-bit logits of a fused one.
double loss_saved_per_logit(const OperatorContext& ctx);

/// Final norm, vocabulary-parallel output projection (logits) and cross-entropy of the last
/// pipeline stage, forward and backward.
std::vector<Operator> head_operators(const workload::TransformerShape& shape, const OperatorContext& ctx);

/// The optimizer step of one GPU over `parameters` parameters it updates (after sharding), with
/// the gradient norm for clipping and the cast of the updated master weights to the working
/// precision. Bytes per parameter from the state sizes (memory.hpp), once per step. A
/// low-precision plan also quantizes its `frozen` weights (peft=lora) once per step, writing the
/// copies quantized_copies gives (`fp8_any_layout`: the GPU's, low_precision.hpp).
std::vector<Operator> optimizer_operators(double parameters, const plan::Plan& plan, bool fp8_any_layout,
                                          double frozen = 0.0);

/// The adapter parameters of one GPU's layer: the k x n of its adapter GEMMs (peft=lora).
double adapter_parameters(const std::vector<Operator>& layer);

/// Activation bytes one layer keeps per micro-batch: the sum of its forward operators' `saved`,
/// or only the layer input under full recompute.
Bytes saved_activation_bytes(const std::vector<Operator>& layer, const workload::TransformerShape& shape,
                             const OperatorContext& ctx);

std::string_view to_string(OpPass pass);
std::string_view to_string(OpKind kind);
std::string_view to_string(OpPart part);

}  // namespace stepcast::cost
