// The operator list of a decoder-only transformer as Megatron-LM runs it (Shoeybi et al. 2019;
// Korthikanti et al. 2022, sections 4.1-4.2), one micro-batch on one GPU after tensor and
// sequence parallel sharding. Notation as in Korthikanti: s sequence, b micro-batch, h hidden,
// a heads, t tensor-parallel degree; f the MLP width, kv the key/value heads, d = h/a.
#include "stepcast/cost/operators.hpp"

#include <algorithm>
#include <cmath>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/context_parallel.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/memory.hpp"

namespace stepcast::cost {

namespace {

using workload::TransformerShape;

/// Bytes of the 1-byte dropout masks (Korthikanti et al. 2022, section 4.1).
constexpr double kMaskBytes = 1.0;
/// The cross-entropy works on fp32 logits (Korthikanti section 4.3: 4sbV/t).
constexpr double kFp32Bytes = 4.0;
/// Query rows per FlashAttention thread block (Dao 2023, section 3.3: blocks of {64,128} x
/// {64,128}); fixes how many blocks the attention kernel spreads over the SMs.
constexpr double kFlashQueryBlock = 128.0;

/// Appends operators for one pass; keeps the call sites short.
class OpList {
 public:
  /// `lora_rank` > 0 (peft=lora): the part's weights are frozen, and the linears of a transformer
  /// layer that `lora_targets` names gain adapters of that rank.
  OpList(std::vector<Operator>& ops, OpPart part, double lora_rank = 0.0, unsigned lora_targets = plan::kLoraAllTargets)
      : ops_(ops), part_(part), lora_rank_(lora_rank), lora_targets_(lora_targets) {}

  [[nodiscard]] bool frozen() const { return lora_rank_ > 0.0; }
  /// The rank of the adapter beside a linear of the layer that is LoRA target `module` (0: none).
  [[nodiscard]] double adapter_rank(unsigned module) const {
    return part_ == OpPart::kLayer && (lora_targets_ & module) != 0U ? lora_rank_ : 0.0;
  }

  /// A GEMM C[m,n] = A[m,k] B[k,n] (`batch` times) reading A and B and writing C, `e` bytes each.
  Operator& gemm(std::string_view name, OpPass pass, GemmShape g, double e) {
    Operator op = base(name, pass, OpKind::kGemm);
    op.gemm = g;
    op.flops = Flops(2.0 * g.batch * g.m * g.n * g.k);
    op.bytes = Bytes(g.batch * (g.m * g.k + g.k * g.n + g.m * g.n) * e);
    return push(op);
  }

  /// A memory-bound kernel touching `bytes`, with `flops` on the CUDA cores.
  Operator& memory(std::string_view name, OpPass pass, double elements, double bytes, double flops = 0.0) {
    Operator op = base(name, pass, OpKind::kMemory);
    op.elements = elements;
    op.bytes = Bytes(bytes);
    op.flops = Flops(flops);
    return push(op);
  }

  Operator& push(const Operator& op) {
    ops_.push_back(op);
    return ops_.back();
  }

  [[nodiscard]] std::size_t size() const { return ops_.size(); }

  /// A checkpointed span from `begin` on keeps only its input, `input_bytes`, for its backward.
  void keep_only(std::size_t begin, double input_bytes) {
    for (std::size_t i = begin; i < ops_.size(); ++i) ops_[i].saved = Bytes(i == begin ? input_bytes : 0.0);
  }

  /// Marks the operators from `begin` on as parts of a recompute module (plan::RecomputeModule).
  void tag_from(std::size_t begin, unsigned module) {
    for (std::size_t i = begin; i < ops_.size(); ++i) ops_[i].recompute_module = module;
  }

 private:
  Operator base(std::string_view name, OpPass pass, OpKind kind) const {
    Operator op;
    op.name = name;
    op.part = part_;
    op.pass = pass;
    op.kind = kind;
    return op;
  }

  std::vector<Operator>& ops_;
  OpPart part_;
  double lora_rank_;
  unsigned lora_targets_;
};

/// LoRA's adapter beside a frozen linear Y = X W (X: m x k, W: k x n), Y += (X A) B with A: k x r
/// and B: r x n (Hu et al. 2021, section 4.1): two forward GEMMs, the data gradient through both,
/// and the weight gradients of A and B, which alone train. The backward keeps X A (m x r).
void adapter(OpList& fwd, OpList& bwd, double m, double n, double k, double r, double e) {
  const auto mark = [](Operator& op) -> Operator& {
    op.adapter = true;
    return op;
  };
  mark(fwd.gemm("lora adapter A", OpPass::kForward, {1.0, m, r, k}, e)).saved = Bytes(m * r * e);
  mark(fwd.gemm("lora adapter B", OpPass::kForward, {1.0, m, n, r}, e));
  mark(bwd.gemm("lora adapter B (dgrad)", OpPass::kBackward, {1.0, m, r, n}, e));
  mark(bwd.gemm("lora adapter A (dgrad)", OpPass::kBackward, {1.0, m, k, r}, e));
  mark(bwd.gemm("lora adapter B (wgrad)", OpPass::kWeightGrad, {1.0, r, n, m}, e));
  mark(bwd.gemm("lora adapter A (wgrad)", OpPass::kWeightGrad, {1.0, k, r, m}, e));
}

/// The forward GEMM Y = X W (x: m x k) and its two backward GEMMs: dX = dY W^T (data gradient)
/// and dW = X^T dY (weight gradient), each with the forward's FLOPs (Narayanan et al. 2021,
/// Appendix: the backward is twice the forward). The weight gradient accumulates into the
/// gradient buffer over micro-batches (cuBLAS beta = 1 in Megatron-LM's fused accumulation;
/// autograd's add into .grad in PyTorch), so it also reads the k x n gradient it adds to.
/// Under a low-precision plan (`quantized`: a transformer layer's linear, as Transformer Engine
/// runs them) all three GEMMs run quantized: a quantize kernel casts the input before the forward
/// and the output gradient before the backward GEMMs, each block-scaled GEMM swizzles its operands'
/// scales first (scale_swizzle_kernels), and the forward keeps its input's quantized copy instead
/// of the 16-bit one (plus `kept_16bit` bytes another operator still needs).
/// A frozen weight (peft=lora) has no weight gradient; an adapter runs beside it where the plan's
/// LoRA targets name its module (`lora_module`, a plan::LoraTarget bit; 0 for no target).
/// Under sequence parallel (`gathered`), Transformer Engine quantizes the tensor a linear gathers
/// over the tensor ranks before the all-gather, on this rank's 1/t of the tokens: a column-parallel
/// GEMM's input (linear.py: gather_along_first_dim(inputmat, tp_group, quantizer=input_quantizer);
/// distributed.py's _all_gather_fp8 and _all_gather_mxfp8 cast the local shard, then gather its
/// quantized data) and a row-parallel GEMM's output gradient (grad_output_preprocess, the same call).
enum class SpGathered { kNone, kInput, kOutputGradient };
void linear(OpList& fwd, OpList& bwd, std::string_view name, std::string_view dgrad, std::string_view wgrad, double m,
            double n, double k, double e, double saved_bytes, const OperatorContext* quantized = nullptr,
            double kept_16bit = 0.0, SpGathered gathered = SpGathered::kNone, unsigned lora_module = 0) {
  const bool q = quantized != nullptr && is_low_precision(quantized->precision);
  const double shards = q && quantized->sequence_parallel ? quantized->tp : 1.0;
  if (q) {
    const double input = m * k / (gathered == SpGathered::kInput ? shards : 1.0);
    const QuantizeCost cast = quantize_cost(input, e, quantized->precision, quantized->fp8_recipe,
                                            quantized->fp8_any_layout, QuantizedTensor::kOperand);
    fwd.memory("quantize GEMM input", OpPass::kForward, input, cast.bytes, cast.flops).kernels = cast.kernels;
    // A frozen weight needs no input for its weight gradient: only its adapter's 16-bit one stays.
    if (!fwd.frozen()) saved_bytes = saved_bytes / e * quantized_bytes_per_element(quantized->precision) + kept_16bit;
  }
  // A quantized GEMM: one framework call that launches the GEMM and its operands' scale swizzles.
  const auto quantize_gemm = [&](Operator& op) {
    op.low_precision = q;
    if (!q) return;
    op.kernels = 1.0 + scale_swizzle_kernels(quantized->precision);
    op.host_calls = 1.0;
  };
  Operator& f = fwd.gemm(name, OpPass::kForward, {1.0, m, n, k}, e);
  f.saved = Bytes(saved_bytes);
  quantize_gemm(f);
  quantize_gemm(bwd.gemm(dgrad, OpPass::kBackward, {1.0, m, k, n}, e));
  if (!fwd.frozen()) {
    Operator& w = bwd.gemm(wgrad, OpPass::kWeightGrad, {1.0, k, n, m}, e);
    w.bytes += Bytes(k * n * e);
    quantize_gemm(w);
  }
  if (const double rank = fwd.adapter_rank(lora_module); rank > 0.0) adapter(fwd, bwd, m, n, k, rank, e);
  if (q) {
    // Pushed after the backward GEMMs, since the backward list is reversed: it runs before them.
    const double gradient = m * n / (gathered == SpGathered::kOutputGradient ? shards : 1.0);
    const QuantizeCost cast = quantize_cost(gradient, e, quantized->precision, quantized->fp8_recipe,
                                            quantized->fp8_any_layout, QuantizedTensor::kOperand);
    bwd.memory("quantize output gradient", OpPass::kBackward, gradient, cast.bytes, cast.flops).kernels = cast.kernels;
  }
}

/// LayerNorm / RMSNorm over `tokens` x h: reads x, writes y; the backward reads x and dy and
/// writes dx (the gain and bias gradients are reductions over the same reads). It keeps its input.
/// `recompute_module`: kRecomputeLayernorm for a transformer layer's two norms, which Megatron-Core's
/// layernorm recompute covers (TransformerLayer's input_layernorm and pre_mlp_layernorm), else 0.
void norm(OpList& fwd, OpList& bwd, std::string_view name, std::string_view back, double tokens, double h, double e,
          unsigned recompute_module = 0) {
  const double n = tokens * h;
  Operator& f = fwd.memory(name, OpPass::kForward, n, 2.0 * n * e, 5.0 * n);
  f.saved = Bytes(n * e);
  f.recompute_module = recompute_module;
  bwd.memory(back, OpPass::kBackward, n, 3.0 * n * e, 8.0 * n);
}

/// Megatron's fused bias + dropout + residual add after attention and after the MLP: reads the
/// block output and the residual, writes the sum and the 1-byte mask it keeps; the backward
/// applies the mask to the gradient. Without dropout it is the residual add alone.
void residual(OpList& fwd, OpList& bwd, std::string_view name, std::string_view plain_name, std::string_view back,
              double tokens, double h, double e, bool dropout) {
  const double n = tokens * h;
  if (!dropout) {
    fwd.memory(plain_name, OpPass::kForward, n, 3.0 * n * e, n);
    return;  // the add's gradient is the incoming one: no kernel
  }
  fwd.memory(name, OpPass::kForward, n, 3.0 * n * e + n * kMaskBytes, 3.0 * n).saved = Bytes(n * kMaskBytes);
  bwd.memory(back, OpPass::kBackward, n, 2.0 * n * e + n * kMaskBytes, n);
}

/// Whether the attention core keeps Q, K and V: not where latent attention's up projections and
/// RoPE run again before its backward (Megatron-Core's mla_up_proj, output-discarding).
bool qkv_kept(const TransformerShape& shape, const OperatorContext& c) {
  return !(shape.mla && recomputes(c, plan::kRecomputeMlaUpProj));
}

/// The norm output a block's first GEMMs keep as their input: none where the norm runs again
/// (Megatron-Core's layernorm recompute discards it; under fp8 the GEMMs keep that 16-bit input,
/// set_save_original_input, instead of a quantized copy, so nothing of it stays).
double kept_norm_output(const OperatorContext& c, double bytes) {
  return recomputes(c, plan::kRecomputeLayernorm) ? 0.0 : bytes;
}

/// The attention core without a fused kernel (flash=off), as Megatron's CoreAttention runs it:
/// scores Q K^T per head, fused scale-mask-softmax, dropout, then the product with V.
void unfused_attention(OpList& fwd, OpList& bwd, const TransformerShape& shape, const OperatorContext& c) {
  const double e = c.activation_bytes;
  const double s = c.seq;
  // Query/key and value dims of a head (different under latent attention, DeepSeek-V2 2.1).
  const double d = shape.qk_head_dim();
  const double dv = shape.v_head_dim();
  const double heads = c.micro_batch * shape.heads / c.tp;  // (sequence, head) pairs on this rank
  const double scores = heads * s * s;
  const double tokens = c.micro_batch * s;
  // Q, K and V are not kept where latent attention's up projections run again (mla_up_proj).
  const double qkv = qkv_kept(shape, c) ? 1.0 : 0.0;
  const double q_bytes = qkv * tokens * shape.heads * d / c.tp * e;
  const double kv_bytes = qkv * tokens * static_cast<double>(shape.kv_heads) * d / c.tp * e;
  // Q K^T keeps Q and K (4sbh/t under multi-head attention; K is kv/a as wide under GQA).
  fwd.gemm("attention scores (QK^T)", OpPass::kForward, {heads, s, s, d}, e).saved = Bytes(q_bytes + kv_bytes);
  // Selective recompute keeps only Q, K and V of the core and recomputes the s x s tensors
  // (Korthikanti section 4.2.2), so they are not kept.
  const double kept = recomputes(c, plan::kRecomputeCoreAttn) ? 0.0 : 1.0;
  // The softmax keeps its output (2as^2b/t).
  fwd.memory("softmax", OpPass::kForward, scores, 2.0 * scores * e, 5.0 * scores).saved = Bytes(kept * scores * e);
  double av_saved = kv_bytes;  // V (2sbh/t)
  if (shape.dropout) {
    // The dropout keeps its mask (as^2b/t); its output is the input of the product with V.
    fwd.memory("attention dropout", OpPass::kForward, scores, 2.0 * scores * e + scores * kMaskBytes, 2.0 * scores)
        .saved = Bytes(kept * scores * kMaskBytes);
    av_saved += kept * scores * e;  // the dropout's output (2as^2b/t)
  }
  fwd.gemm("attention over values (PV)", OpPass::kForward, {heads, s, dv, s}, e).saved = Bytes(av_saved);

  // Backward: dP = dO V^T and dV = P^T dO, then dropout and softmax backward, then dQ = dS K and
  // dK = dS^T Q.
  bwd.gemm("attention over values (dP)", OpPass::kBackward, {heads, s, s, dv}, e);
  bwd.gemm("attention over values (dV)", OpPass::kBackward, {heads, s, dv, s}, e);
  if (shape.dropout)
    bwd.memory("attention dropout backward", OpPass::kBackward, scores, 2.0 * scores * e + scores * kMaskBytes, scores);
  bwd.memory("softmax backward", OpPass::kBackward, scores, 3.0 * scores * e, 3.0 * scores);
  bwd.gemm("attention scores (dQ)", OpPass::kBackward, {heads, s, d, s}, e);
  bwd.gemm("attention scores (dK)", OpPass::kBackward, {heads, s, d, s}, e);
}

/// FlashAttention (Dao 2023): one kernel reads Q, K, V and writes O and the softmax statistics;
/// a causal mask skips about half the blocks, so the executed FLOPs are half of 4 s^2 h b / t.
/// The backward recomputes the scores: 2.5x the forward's FLOPs (Dao 2023, section 4.1).
/// Under context parallel each rank holds s/cp tokens: its queries meet all s keys, and the
/// causal work is split evenly (context_parallel_attention.cpp says how per cp-comm=).
void fused_attention(OpList& fwd, OpList& bwd, const TransformerShape& shape, const OperatorContext& c) {
  const double e = c.activation_bytes;
  const double s = c.seq;
  const double d = shape.qk_head_dim();
  const double dv = shape.v_head_dim();
  const double heads = c.micro_batch * shape.heads / c.tp;
  const double local = s / c.cp;  // tokens of each sequence on this rank
  const double tokens = c.micro_batch * local;
  const double q_bytes = tokens * shape.heads * d / c.tp * e;
  const double kv_bytes = tokens * static_cast<double>(shape.kv_heads) * (d + dv) / c.tp * e;
  const double stats = heads * local * kFp32Bytes;  // the log-sum-exp per query row
  // Query-key pairs computed: half the s x s square under the causal mask; a sliding window of w
  // keys leaves s w - w^2/2 of them (FlashAttention-2's window_size skips the blocks outside);
  // packed documents of n tokens leave s/n squares of n (cu_seqlens bound each one's blocks);
  // context parallel gives each rank 1/cp of them.
  const CausalSpan span = causal_span(s, c.kind.sliding ? static_cast<double>(shape.sliding_window) : 0.0, c.doc_len);
  const double pairs = s * span.keys_per_query();
  const double causal_flops = 2.0 * heads * pairs * (d + dv) / c.cp;
  const ContextAttention cpa = context_attention(heads, s, d, c);
  Operator f;
  f.name = "flash attention";
  f.part = OpPart::kLayer;
  f.pass = OpPass::kForward;
  f.kind = OpKind::kFusedAttention;
  // One kernel's shape: the ring step's under context parallel, else each document's queries
  // against the keys in reach (a sliding window's w).
  f.gemm = c.cp == 1.0 ? GemmShape{heads * (s / span.document), span.document, span.window, d} : cpa.shape;
  f.head_dim = 0.5 * (d + dv);
  f.elements = f.gemm.batch * std::ceil(f.gemm.m / kFlashQueryBlock);  // thread blocks of one kernel
  f.flops = Flops(causal_flops);
  // Q, K, V in; O and statistics out; each extra ring step reads Q, a K/V chunk and the running
  // O and statistics again.
  f.bytes = Bytes(2.0 * q_bytes + kv_bytes + stats + (cpa.kernels - 1.0) * (3.0 * q_bytes + kv_bytes + 2.0 * stats));
  // Q, K, V and the statistics (O is the next GEMM's input); Q, K and V not where latent
  // attention's up projections run again (mla_up_proj).
  f.saved = Bytes((qkv_kept(shape, c) ? q_bytes + kv_bytes : 0.0) + stats);
  f.kernels = cpa.kernels;
  fwd.push(f);
  Operator b = f;
  b.name = "flash attention backward";
  b.pass = OpPass::kBackward;
  b.flops = Flops(2.5 * causal_flops);
  // Q, K, V, O, dO in; dQ, dK, dV out; each extra ring step again for its chunk.
  b.bytes =
      Bytes(4.0 * q_bytes + 2.0 * kv_bytes + stats + (cpa.kernels - 1.0) * (5.0 * q_bytes + 2.0 * kv_bytes + stats));
  b.saved = Bytes(0.0);
  bwd.push(b);
}

/// Layer input bytes of one micro-batch on one GPU (sharded along the sequence under sequence parallel).
double layer_input_bytes(const TransformerShape& shape, const OperatorContext& c) {
  const double tokens = c.micro_batch * c.seq / c.cp / (c.sequence_parallel ? c.tp : 1.0);
  return tokens * shape.hidden * c.activation_bytes;
}

}  // namespace

OperatorContext operator_context(const plan::Plan& plan) {
  OperatorContext c;
  c.micro_batch = plan.micro_batch_size;
  c.seq = plan.seq_len;
  c.tp = plan.tp;
  c.sequence_parallel = plan.sequence_parallel;
  c.flash = plan.flash_attention;
  c.recompute = plan.recompute;
  c.recompute_modules = plan.recompute_modules;
  c.cp = plan.cp;
  c.cp_comm = plan.cp_comm;
  c.doc_len = plan.doc_len;
  // Activations travel in the working precision: 16-bit under mixed precision (fp8 GEMMs take
  // and return 16-bit tensors in Transformer Engine), 32-bit for fp32/tf32 training.
  c.activation_bytes = state_bytes_per_parameter(plan.precision, plan.optimizer).parameters;
  c.precision = plan.precision;
  c.fp8_recipe = plan.fp8_recipe;
  c.experts.ep = plan.ep;
  c.experts.etp = plan.expert_tp();
  c.experts.regroups_by_expert = plan.moe_dispatcher == plan::MoeDispatcher::kAllToAll;
  c.experts.fused_mlp = plan.moe_fused_mlp;
  // A capacity factor caps the busiest expert's tokens (the rest are dropped).
  c.experts.load_factor =
      plan.capacity_factor ? std::min(plan.moe_imbalance, *plan.capacity_factor) : plan.moe_imbalance;
  c.lora_rank = plan.peft == plan::Peft::kLora ? plan.lora_rank : 0.0;
  c.lora_targets = plan.lora_targets;
  c.loss = plan.loss;
  c.train_metrics = plan.train_metrics;
  return c;
}

CausalSpan causal_span(double seq, double window, double doc_len) {
  const double document = doc_len > 0.0 ? std::min(doc_len, seq) : seq;
  return {document, window > 0.0 ? std::min(window, document) : document};
}

double causal_keys_per_query(double seq, double window, double doc_len) {
  return causal_span(seq, window, doc_len).keys_per_query();
}

bool recomputes(const OperatorContext& c, unsigned module) {
  return c.recompute == plan::Recompute::kSelective && (c.recompute_modules & module) != 0U;
}

namespace {

// The sizes a layer's kernels are built from, for one micro-batch on one GPU.
struct LayerDims {
  double e;             // bytes of an activation element
  double h;             // hidden size
  double t;             // tensor-parallel degree
  double tokens;        // GEMM rows (s/cp per rank)
  double shard_tokens;  // norm, dropout, residual rows (sharded again under sequence parallel)
  double kv_width;
  double q_width;
  double f;  // MLP width
};

// The attention block's projections into the core: latent attention's down and up projections
// (DeepSeek-V2 section 2.1, as Megatron-core's MLASelfAttention runs them: the down projections
// on every tensor rank, the up projections split over them) or the QKV GEMM, then the rotary
// embedding where the model has it.
void attention_projections(OpList& fwd, OpList& bwd, const TransformerShape& shape, const OperatorContext& c,
                           const LayerDims& d) {
  const double e = d.e;
  const double h = d.h;
  const double t = d.t;
  // The first GEMMs keep the norm's output (sharded again under sequence parallel).
  const double norm_output = kept_norm_output(c, d.shard_tokens * h * e);
  std::size_t up_begin = 0;
  if (shape.mla) {
    const auto& m = *shape.mla;
    const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const double heads = shape.heads;
    if (m.q_lora_rank > 0) {
      linear(fwd, bwd, "q down projection", "q down projection (dgrad)", "q down projection (wgrad)", d.tokens,
             m.q_lora_rank, h, e, norm_output, &c, 0.0, SpGathered::kNone, plan::kLoraQkv);
    } else {
      linear(fwd, bwd, "q projection", "q projection (dgrad)", "q projection (wgrad)", d.tokens, heads * qk / t, h, e,
             norm_output, &c, 0.0, SpGathered::kNone, plan::kLoraQkv);
    }
    linear(fwd, bwd, "kv down projection", "kv down projection (dgrad)", "kv down projection (wgrad)", d.tokens,
           m.kv_lora_rank + m.qk_rope_head_dim, h, e, 0.0, &c, 0.0, SpGathered::kNone, plan::kLoraQkv);
    // The up projections and RoPE: what Megatron-Core's mla_up_proj recompute runs again.
    up_begin = fwd.size();
    if (m.q_lora_rank > 0) {
      linear(fwd, bwd, "q up projection", "q up projection (dgrad)", "q up projection (wgrad)", d.tokens,
             heads * qk / t, m.q_lora_rank, e, d.tokens * m.q_lora_rank * e, &c, 0.0, SpGathered::kNone,
             plan::kLoraQkv);
    }
    linear(fwd, bwd, "kv up projection", "kv up projection (dgrad)", "kv up projection (wgrad)", d.tokens,
           heads * (m.qk_nope_head_dim + m.v_head_dim) / t, m.kv_lora_rank, e, d.tokens * m.kv_lora_rank * e, &c, 0.0,
           SpGathered::kNone, plan::kLoraQkv);
  } else {
    linear(fwd, bwd, "qkv projection", "qkv projection (dgrad)", "qkv projection (wgrad)", d.tokens,
           (d.q_width + 2.0 * d.kv_width) / t, h, e, norm_output, &c, 0.0, SpGathered::kInput, plan::kLoraQkv);
  }
  if (shape.rotary) {
    // Q and K; under latent attention only their rope dims (each head's and the shared key's).
    const double rotated = shape.mla ? d.tokens * (shape.heads / t + 1.0) * shape.mla->qk_rope_head_dim
                                     : d.tokens * (d.q_width + d.kv_width) / t;
    fwd.memory("rotary embedding", OpPass::kForward, rotated, 2.0 * rotated * e, 3.0 * rotated);
    bwd.memory("rotary embedding backward", OpPass::kBackward, rotated, 2.0 * rotated * e, 3.0 * rotated);
  }
  if (shape.mla) fwd.tag_from(up_begin, plan::kRecomputeMlaUpProj);
}

// A dense block's MLP: up (and gate) projection, activation, down projection.
void dense_mlp(OpList& fwd, OpList& bwd, const TransformerShape& shape, const OperatorContext& c, const LayerDims& d,
               double up_width) {
  const double e = d.e;
  const std::size_t begin = fwd.size();
  const double norm_output = kept_norm_output(c, d.shard_tokens * d.h * e);
  linear(fwd, bwd, shape.gated_mlp ? "mlp gate+up projection" : "mlp up projection",
         shape.gated_mlp ? "mlp gate+up projection (dgrad)" : "mlp up projection (dgrad)",
         shape.gated_mlp ? "mlp gate+up projection (wgrad)" : "mlp up projection (wgrad)", d.tokens, up_width, d.h, e,
         norm_output, &c, 0.0, SpGathered::kInput, plan::kLoraFc1);
  const double inner = d.tokens * d.f / d.t;
  if (shape.gated_mlp) {
    // SwiGLU (Shazeer 2020) keeps the gate and up outputs; the down projection keeps their product.
    fwd.memory("swiglu", OpPass::kForward, inner, 3.0 * inner * e, 6.0 * inner).saved = Bytes(2.0 * inner * e);
    bwd.memory("swiglu backward", OpPass::kBackward, inner, 5.0 * inner * e, 10.0 * inner);
  } else {
    // Megatron's fused bias + GeLU keeps its input (8sbh/t at f = 4h, Korthikanti section 4.1).
    fwd.memory("gelu", OpPass::kForward, inner, 2.0 * inner * e, 8.0 * inner).saved = Bytes(inner * e);
    bwd.memory("gelu backward", OpPass::kBackward, inner, 3.0 * inner * e, 12.0 * inner);
  }
  linear(fwd, bwd, "mlp down projection", "mlp down projection (dgrad)", "mlp down projection (wgrad)", d.tokens, d.h,
         d.f / d.t, e, inner * e, &c, 0.0, SpGathered::kOutputGradient, plan::kLoraFc2);
  fwd.tag_from(begin, plan::kRecomputeMlp);
  if (recomputes(c, plan::kRecomputeMlp)) {
    // Checkpointed whole (Megatron-Core's "mlp", normal checkpointing): it keeps its input alone.
    fwd.keep_only(begin, norm_output);
  }
}

// MambaContextParallel's copies around its all-to-alls (torch.cat on the sending and the
// receiving side, and the sequence taken out of attention's load-balanced order and put back), each
// a read and a write of `elements` of this rank's s/cp tokens; the backward copies the gradients
// alike.
void mamba_layout_copies(OpList& fwd, OpList& bwd, std::string_view name, std::string_view back, double elements,
                         double copies, double kernels, double e) {
  fwd.memory(name, OpPass::kForward, elements, copies * 2.0 * elements * e).kernels = kernels;
  bwd.memory(back, OpPass::kBackward, elements, copies * 2.0 * elements * e).kernels = kernels;
}

// A Mamba-2 mixer (Dao & Gu 2024, arXiv:2405.21060) as Megatron-Core's MambaMixer runs it, heads
// and B/C groups split over tp: in_proj to [z, x, B, C, dt]; the causal depthwise conv1d with
// SiLU over [x, B, C]; the SSD scan in chunks of Q tokens (section 7, Listing 1: within a chunk
// the scores C B^T (Q x Q x N a group) masked and applied to x (Q x Q x P a head); each chunk's
// state B^T x (N x P); the states passed along the chunks; each chunk's output from the state
// entering it, C state (Q x N x P)); the gated RMSNorm y = norm(out * silu(z)); out_proj. The
// fused kernels (mamba_split_conv1d_scan_combined, MambaMixer.ssm_training) keep in_proj's output
// and the scan's output; their backward (mamba_ssm's MambaSplitConv1dScanCombinedFn.backward and
// _mamba_chunk_scan_combined_bwd) runs the conv1d forward again, then the scan's scores (C B^T)
// and chunk states and their passing again, and the scan's gradients: the state gradients, dB
// and dC from them (three more products shaped like the chunk states), dx (one shaped like the
// chunk output), the scores' gradient and the decay's, each over Q x Q x P a head, and dB and dC
// through the scores (two shaped like them).
void mamba_mixer(OpList& fwd, OpList& bwd, const TransformerShape& shape, const OperatorContext& c,
                 const LayerDims& d) {
  const workload::MambaShape& m = shape.hybrid->mamba;
  const double e = d.e;
  const double t = d.t;
  const double inner = m.inner() / t;
  const double in_width = 2.0 * inner + 2.0 * (m.groups / t) * m.state + m.heads / t;
  linear(fwd, bwd, "mamba in projection", "mamba in projection (dgrad)", "mamba in projection (wgrad)", d.tokens,
         in_width, d.h, e, d.shard_tokens * d.h * e, &c, 0.0, SpGathered::kInput, plan::kLoraInProj);
  // Context parallel (Megatron-Core's MambaContextParallel): the conv1d and the scan run over the
  // whole sequence for heads / cp of the tensor rank's heads, after all-to-alls (priced by
  // context_parallel.cpp) and the copies that lay the tensors out for them.
  const MambaSplit split = mamba_split(m, t, c.cp);
  const double heads = split.heads;
  const double groups = split.groups;
  const double scan_tokens = d.tokens * c.cp;
  if (c.cp > 1.0) {
    // Before the scan: z, x, B, C (each group repeated where cp exceeds the groups) and dt, each
    // gathered for its all-to-all (5 kernels); the five received joined; the load-balanced order
    // undone: 3 copies in 7 kernels, of what the scan takes (its whole sequence of its widths).
    mamba_layout_copies(fwd, bwd, "mamba context-parallel layout (in)", "mamba context-parallel layout (in) backward",
                        scan_tokens * split.in_width, 3.0, 7.0, e);
  }
  const double conv_elements = scan_tokens * split.conv_channels;
  fwd.memory("mamba conv1d + silu", OpPass::kForward, conv_elements, 2.0 * conv_elements * e,
             (2.0 * m.conv_kernel + 4.0) * conv_elements)
      .saved = Bytes(scan_tokens * split.in_width * e);
  bwd.memory("mamba conv1d backward", OpPass::kBackward, conv_elements, 3.0 * conv_elements * e,
             (4.0 * m.conv_kernel + 4.0) * conv_elements);
  // The scan's products, each a batched GEMM over the micro-batch's chunks.
  const double q = m.chunk;
  const double chunks = c.micro_batch * std::ceil(c.seq / q);
  const GemmShape scores{chunks * groups, q, q, static_cast<double>(m.state)};
  const GemmShape states{chunks * heads, static_cast<double>(m.state), static_cast<double>(m.head_dim), q};
  const GemmShape output{chunks * heads, q, static_cast<double>(m.head_dim), q + m.state};
  const GemmShape per_score{chunks * heads, q, q, static_cast<double>(m.head_dim)};
  const double state_elements = chunks * heads * m.state * m.head_dim;
  fwd.gemm("ssd chunk scores", OpPass::kForward, scores, e);
  fwd.gemm("ssd chunk states", OpPass::kForward, states, e);
  fwd.memory("ssd state passing", OpPass::kForward, state_elements, 2.0 * state_elements * e);
  fwd.gemm("ssd chunk output", OpPass::kForward, output, e).saved = Bytes(scan_tokens * split.inner * e);
  bwd.memory("mamba conv1d recompute", OpPass::kBackward, conv_elements, 2.0 * conv_elements * e,
             (2.0 * m.conv_kernel + 4.0) * conv_elements);
  bwd.gemm("ssd chunk scores recompute", OpPass::kBackward, scores, e);
  bwd.gemm("ssd chunk states recompute", OpPass::kBackward, states, e);
  bwd.memory("ssd state passing recompute", OpPass::kBackward, state_elements, 2.0 * state_elements * e);
  bwd.gemm("ssd state gradients", OpPass::kBackward, states, e);
  // Reads the states and their gradients, writes both back (the states in the input's dtype).
  bwd.memory("ssd state passing backward", OpPass::kBackward, state_elements, 4.0 * state_elements * e);
  bwd.gemm("ssd x gradient", OpPass::kBackward, output, e);
  bwd.gemm("ssd B gradient", OpPass::kBackward, states, e);
  bwd.gemm("ssd C gradient", OpPass::kBackward, states, e);
  bwd.gemm("ssd scores gradient", OpPass::kBackward, per_score, e);
  bwd.gemm("ssd B gradient through the scores", OpPass::kBackward, scores, e);
  bwd.gemm("ssd C gradient through the scores", OpPass::kBackward, scores, e);
  bwd.gemm("ssd decay gradient", OpPass::kBackward, per_score, e);
  if (c.cp > 1.0) {
    // After the scan: the load-balanced order restored, the heads joined back: 2 copies.
    mamba_layout_copies(fwd, bwd, "mamba context-parallel layout (out)", "mamba context-parallel layout (out) backward",
                        d.tokens * inner, 2.0, 2.0, e);
  }
  const double gated = d.tokens * inner;
  fwd.memory("mamba gated norm", OpPass::kForward, gated, 3.0 * gated * e, 8.0 * gated);
  bwd.memory("mamba gated norm backward", OpPass::kBackward, gated, 5.0 * gated * e, 14.0 * gated);
  linear(fwd, bwd, "mamba out projection", "mamba out projection (dgrad)", "mamba out projection (wgrad)", d.tokens,
         d.h, inner, e, gated * e, &c, 0.0, SpGathered::kOutputGradient, plan::kLoraOutProj);
}

// The forward, then what recompute runs again before the layer's backward (the whole forward, or
// the operators of the selective recompute modules, by default the attention core: Korthikanti
// et al. 2022 section 4.2.2), then the backward, whose blocks run in reverse order.
std::vector<Operator> with_recompute_and_backward(std::vector<Operator> ops, std::vector<Operator> backward,
                                                  const OperatorContext& c) {
  std::reverse(backward.begin(), backward.end());
  std::vector<Operator> recomputed;
  for (const Operator& op : ops) {
    if (c.recompute == plan::Recompute::kFull || recomputes(c, op.recompute_module)) {
      Operator r = op;
      r.pass = OpPass::kRecompute;
      r.saved = Bytes(0.0);
      recomputed.push_back(r);
    }
  }
  ops.insert(ops.end(), recomputed.begin(), recomputed.end());
  ops.insert(ops.end(), backward.begin(), backward.end());
  return ops;
}

}  // namespace

std::vector<Operator> layer_operators(const TransformerShape& shape, const OperatorContext& c) {
  STEPCAST_ASSERT(c.seq > 0.0 && c.micro_batch > 0.0 && c.tp >= 1.0, "layer_operators needs a resolved plan");
  if (c.kind.bf16 && c.precision != plan::Precision::kBf16) {
    // A layer kept out of the autocast: its GEMMs in bf16, nothing to quantize.
    OperatorContext kept = c;
    kept.precision = plan::Precision::kBf16;
    return layer_operators(shape, kept);
  }
  std::vector<Operator> ops;
  ops.reserve(40);
  std::vector<Operator> backward;
  backward.reserve(24);
  OpList fwd(ops, OpPart::kLayer, c.lora_rank, c.lora_targets);
  OpList bwd(backward, OpPart::kLayer, c.lora_rank, c.lora_targets);
  const double tokens = c.micro_batch * c.seq / c.cp;
  const LayerDims d{c.activation_bytes,
                    static_cast<double>(shape.hidden),
                    c.tp,
                    tokens,
                    tokens / (c.sequence_parallel ? c.tp : 1.0),
                    static_cast<double>(shape.kv_heads) * shape.head_dim(),
                    static_cast<double>(shape.query_width()),
                    static_cast<double>(shape.ffn_hidden)};
  const double e = d.e;
  const double h = d.h;
  const double t = d.t;
  const bool attention = c.kind.has_attention();
  const bool mlp = c.kind.has_mlp();

  if (attention) {
    norm(fwd, bwd, "input norm", "input norm backward", d.shard_tokens, h, e, plan::kRecomputeLayernorm);
    attention_projections(fwd, bwd, shape, c, d);
    const std::size_t core_begin = fwd.size();
    if (c.flash) {
      fused_attention(fwd, bwd, shape, c);
    } else {
      STEPCAST_ASSERT(c.cp == 1.0, "context parallel needs fused attention (plan rule)");
      unfused_attention(fwd, bwd, shape, c);
    }
    fwd.tag_from(core_begin, plan::kRecomputeCoreAttn);
    const double attention_out = static_cast<double>(shape.heads) * shape.v_head_dim();  // = h for most models
    // FlashAttention's backward reads its output O, which the output projection no longer keeps
    // in 16-bit when it runs quantized.
    linear(fwd, bwd, "output projection", "output projection (dgrad)", "output projection (wgrad)", tokens, h,
           attention_out / t, e, tokens * attention_out / t * e, &c, c.flash ? tokens * attention_out / t * e : 0.0,
           SpGathered::kOutputGradient, plan::kLoraProj);
    // Where the experts carry biases Megatron-Core cannot fuse the output projection's bias with
    // the residual add (TEGroupedMLP asserts bias_dropout_fusion off): x + bias is its own kernel,
    // a read and a write; its gradient is the incoming one (the bias's is among the reductions below).
    if (shape.biases && shape.moe && shape.moe->expert_biases)
      fwd.memory("output projection bias add", OpPass::kForward, d.shard_tokens * h, 2.0 * d.shard_tokens * h * e,
                 d.shard_tokens * h);
    residual(fwd, bwd, "dropout + residual (attention)", "residual add (attention)", "dropout backward (attention)",
             d.shard_tokens, h, e, shape.dropout);
  }
  if (c.kind.block == workload::Block::kMamba) {
    norm(fwd, bwd, "input norm", "input norm backward", d.shard_tokens, h, e);
    mamba_mixer(fwd, bwd, shape, c, d);
    residual(fwd, bwd, "dropout + residual (mamba)", "residual add (mamba)", "dropout backward (mamba)", d.shard_tokens,
             h, e, shape.dropout);
  }

  // MLP block, or routed experts.
  const double up_width = c.kind.moe ? 0.0 : (shape.gated_mlp ? 2.0 : 1.0) * d.f / t;
  if (mlp) {
    norm(fwd, bwd, attention ? "post-attention norm" : "input norm",
         attention ? "post-attention norm backward" : "input norm backward", d.shard_tokens, h, e,
         plan::kRecomputeLayernorm);
    if (c.kind.moe) {
      append_moe_mlp(shape, c, ops, backward);
    } else {
      dense_mlp(fwd, bwd, shape, c, d, up_width);
    }
    residual(fwd, bwd, "dropout + residual (mlp)", "residual add (mlp)", "dropout backward (mlp)", d.shard_tokens, h, e,
             shape.dropout);
  }

  if (shape.biases && !fwd.frozen()) {
    // Bias gradients: one reduction over each linear layer's output gradient.
    // (An MoE block's expert biases are reduced inside its grouped weight-gradient kernels.)
    const double attention_widths = attention ? (d.q_width + 2.0 * d.kv_width) / t + h : 0.0;
    const double mlp_widths = mlp ? up_width + (c.kind.moe ? 0.0 : h) : 0.0;
    const double widths = attention_widths + mlp_widths;
    bwd.memory("bias gradients", OpPass::kWeightGrad, tokens * widths, tokens * widths * e, tokens * widths).kernels =
        (attention ? 2.0 : 0.0) + (mlp && !c.kind.moe ? 2.0 : 0.0);
  }
  return with_recompute_and_backward(std::move(ops), std::move(backward), c);
}

std::vector<Operator> embedding_operators(const TransformerShape& shape, const OperatorContext& c) {
  std::vector<Operator> ops;
  OpList fwd(ops, OpPart::kEmbedding, c.lora_rank);
  const double e = c.activation_bytes;
  const double tokens = c.micro_batch * c.seq / c.cp;
  const double n = tokens * shape.hidden;
  // Vocabulary-parallel lookup: each rank gathers the rows of its vocabulary shard and writes a
  // full-width output that the tensor-parallel group then sums (Shoeybi et al. 2019, section 3).
  fwd.memory("embedding lookup", OpPass::kForward, n, 2.0 * n * e);
  if (shape.learned_positions) fwd.memory("position embedding add", OpPass::kForward, n, 3.0 * n * e, n);
  if (shape.dropout)
    fwd.memory("embedding dropout", OpPass::kForward, n, 2.0 * n * e + n * kMaskBytes, n).saved = Bytes(n * kMaskBytes);
  // The backward scatters the output gradient into the embedding gradient rows (none when frozen).
  if (!fwd.frozen()) fwd.memory("embedding gradient", OpPass::kWeightGrad, n, 3.0 * n * e, n);
  return ops;
}

double loss_saved_per_logit(const OperatorContext& ctx) {
  return ctx.loss == plan::LossKernel::kFused ? ctx.activation_bytes : kFp32Bytes;
}

namespace {

/// The forward of PyTorch's eager F.cross_entropy on fp32 logits, per logit: autocast's cast
/// (reads the 16-bit logit, writes 4 B), log_softmax over a row larger than an SM's shared memory
/// (cunn_SoftMaxForward: max, sum and output passes read it three times and write 4 B), and
/// nll_loss's one gather a row. Three kernels.
double eager_forward_bytes(double e) { return e + kFp32Bytes + 3.0 * kFp32Bytes + kFp32Bytes; }

/// The cross-entropy of the loss (loss=) and of the training metrics (train-metrics=) over
/// `logits` elements of this rank.
void cross_entropy(OpList& fwd, OpList& bwd, double logits, const OperatorContext& c) {
  const double e = c.activation_bytes;
  switch (c.loss) {
    case plan::LossKernel::kMegatron: {
      // Vocabulary-parallel cross-entropy (Megatron-LM cross_entropy.py): the logits cast to
      // fp32, max, exp and sum passes; it keeps the fp32 softmax (Korthikanti section 4.3:
      // 4sbV/t). The backward writes softmax - one-hot in the working precision.
      Operator& f =
          fwd.memory("cross-entropy", OpPass::kForward, logits, logits * (e + 4.0 * kFp32Bytes), 5.0 * logits);
      f.saved = Bytes(logits * loss_saved_per_logit(c));
      f.kernels = 4.0;
      bwd.memory("cross-entropy backward", OpPass::kBackward, logits, logits * (kFp32Bytes + e), logits);
      break;
    }
    case plan::LossKernel::kFused: {
      // One kernel each way on the 16-bit logits (flash-attn's cross_entropy, from apex's
      // xentropy: a max pass and a sum-of-exp pass in the forward, which keeps the logits and
      // each row's log-sum-exp; the backward reads a logit and writes its gradient).
      Operator& f = fwd.memory("cross-entropy (fused)", OpPass::kForward, logits, logits * 2.0 * e, 5.0 * logits);
      f.saved = Bytes(logits * loss_saved_per_logit(c));
      bwd.memory("cross-entropy backward (fused)", OpPass::kBackward, logits, logits * 2.0 * e, 2.0 * logits);
      break;
    }
    case plan::LossKernel::kEager: {
      // Keeps log_softmax's fp32 output. The backward: nll_loss's zero-filled fp32 gradient,
      // log_softmax's backward (a sum pass over the gradient, then gradient and output read and
      // the input gradient written) and the cast back to the working precision.
      Operator& f = fwd.memory("cross-entropy (eager fp32)", OpPass::kForward, logits, logits * eager_forward_bytes(e),
                               5.0 * logits);
      f.saved = Bytes(logits * loss_saved_per_logit(c));
      f.kernels = 3.0;
      Operator& b = bwd.memory("cross-entropy backward (eager fp32)", OpPass::kBackward, logits,
                               logits * (kFp32Bytes + 4.0 * kFp32Bytes + kFp32Bytes + e), 3.0 * logits);
      b.kernels = 4.0;
      break;
    }
  }
  if (c.train_metrics > 0.0) {
    // Each metric an eager cross-entropy forward over the same logits, after the backward
    // (Composer's Trainer._eval_train_metrics under the autocast context); nothing kept.
    Operator& m = fwd.memory("training metrics", OpPass::kForward, c.train_metrics * logits,
                             c.train_metrics * logits * eager_forward_bytes(e), c.train_metrics * 5.0 * logits);
    m.kernels = 3.0 * c.train_metrics;
  }
}

}  // namespace

std::vector<Operator> head_operators(const TransformerShape& shape, const OperatorContext& c) {
  std::vector<Operator> ops;
  std::vector<Operator> backward;
  OpList fwd(ops, OpPart::kHead, c.lora_rank);
  OpList bwd(backward, OpPart::kHead, c.lora_rank);
  const double e = c.activation_bytes;
  const double tokens = c.micro_batch * c.seq / c.cp;
  const double shard_tokens = tokens / (c.sequence_parallel ? c.tp : 1.0);
  const double h = shape.hidden;
  const double vocab = shape.vocab / c.tp;  // vocabulary-parallel columns on this rank
  norm(fwd, bwd, "final norm", "final norm backward", shard_tokens, h, e);
  linear(fwd, bwd, "logits", "logits (dgrad)", "logits (wgrad)", tokens, vocab, h, e, shard_tokens * h * e);
  cross_entropy(fwd, bwd, tokens * vocab, c);
  // The backward runs the loss first, then the logits GEMMs, then the norm.
  std::reverse(backward.begin(), backward.end());
  ops.insert(ops.end(), backward.begin(), backward.end());
  return ops;
}

std::vector<Operator> optimizer_operators(double parameters, const plan::Plan& plan, bool fp8_any_layout,
                                          double frozen) {
  std::vector<Operator> ops;
  OpList opt(ops, OpPart::kOptimizer);
  const StateBytesPerParameter per = state_bytes_per_parameter(plan.precision, plan.optimizer);
  const double p = parameters;
  // Gradient norm for clipping (Megatron clip_grad_norm_fp32, PyTorch clip_grad_norm_): one read.
  opt.memory("gradient norm", OpPass::kForward, p, p * per.gradients, 2.0 * p);
  // The update (fused multi-tensor Adam): reads the gradients and the K bytes of optimizer state
  // (fp32 master weights and moments), writes the state back and the working-precision weights.
  opt.memory("optimizer update", OpPass::kForward, p, p * (per.gradients + 2.0 * per.optimizer + per.parameters),
             12.0 * p);
  // Gradients are zeroed for the next step.
  opt.memory("zero gradients", OpPass::kForward, p, p * per.gradients);
  if (is_low_precision(plan.precision)) {
    // The updated weights are quantized once per step (Transformer Engine caches them over the
    // micro-batches: Megatron-LM's is_first_microbatch, frozen weights too), all of this GPU's
    // parameters counted.
    const double weights = p + frozen;
    const QuantizeCost cast = quantize_cost(weights, per.parameters, plan.precision, plan.fp8_recipe, fp8_any_layout,
                                            QuantizedTensor::kWeight);
    opt.memory("quantize weights", OpPass::kForward, weights, cast.bytes, cast.flops).kernels = cast.kernels;
  }
  return ops;
}

double adapter_parameters(const std::vector<Operator>& layer) {
  double total = 0.0;
  for (const Operator& op : layer) {
    if (op.adapter && op.pass == OpPass::kForward) total += op.gemm.k * op.gemm.n;
  }
  return total;
}

Bytes saved_activation_bytes(const std::vector<Operator>& layer, const TransformerShape& shape,
                             const OperatorContext& ctx) {
  if (ctx.recompute == plan::Recompute::kFull) return Bytes(layer_input_bytes(shape, ctx));
  Bytes total(0.0);
  for (const Operator& op : layer) {
    if (op.pass == OpPass::kForward) total += op.saved;
  }
  return total;
}

std::string_view to_string(OpPass pass) {
  switch (pass) {
    case OpPass::kForward:
      return "forward";
    case OpPass::kBackward:
      return "backward";
    case OpPass::kWeightGrad:
      return "weight gradient";
    case OpPass::kRecompute:
      return "recompute";
  }
  STEPCAST_UNREACHABLE("unknown pass");
}

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::kGemm:
      return "gemm";
    case OpKind::kFusedAttention:
      return "fused attention";
    case OpKind::kMemory:
      return "memory-bound";
  }
  STEPCAST_UNREACHABLE("unknown kind");
}

std::string_view to_string(OpPart part) {
  switch (part) {
    case OpPart::kLayer:
      return "layer";
    case OpPart::kEmbedding:
      return "embedding";
    case OpPart::kHead:
      return "output layer";
    case OpPart::kOptimizer:
      return "optimizer";
  }
  STEPCAST_UNREACHABLE("unknown part");
}

}  // namespace stepcast::cost
