// The MLP of an MoE block as Megatron-core runs it with its all-to-all token dispatcher
// (Megatron-LM's MoE guide; Gale et al. 2023, MegaBlocks, for grouped expert GEMMs): the router
// GEMM and top-k, the permute that orders token copies by expert, the sort of the rows a rank
// receives by local expert (and back), the experts as grouped GEMMs at their real shape (tokens
// per expert rows), the unpermute that sums each token's weighted copies, and the shared experts
// beside them. Under fp8/mxfp8/nvfp4 the experts' and the shared
// experts' GEMMs run quantized, as Transformer Engine's GroupedLinear and Linear do under
// fp8_autocast; the router's stays in 16-bit. Which blocks of a stage are MoE or sliding-window.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/operators.hpp"

namespace stepcast::cost {

namespace {

Operator make(std::string_view name, OpPass pass, OpKind kind) {
  Operator op;
  op.name = name;
  op.part = OpPart::kLayer;
  op.pass = pass;
  op.kind = kind;
  return op;
}

/// A quantize kernel over `elements` 16-bit values (low_precision.hpp).
Operator quantize(std::string_view name, OpPass pass, double elements, double e, const OperatorContext& c,
                  QuantizedTensor tensor) {
  const QuantizeCost cast = quantize_cost(elements, e, c.precision, c.fp8_recipe, c.fp8_any_layout, tensor);
  Operator op = make(name, pass, OpKind::kMemory);
  op.elements = elements;
  op.bytes = Bytes(cast.bytes);
  op.flops = Flops(cast.flops);
  op.kernels = cast.kernels;
  return op;
}

/// Which GEMMs of an MoE block run in the plan's low-precision format: `quantized` names the
/// block's context for those that do (experts, shared experts), null for the router's.
struct Quantized {
  const OperatorContext* context = nullptr;
  std::string_view input_cast;     ///< the forward's quantize kernel
  std::string_view gradient_cast;  ///< the backward's
  /// The routed experts' GroupedLinear casts all of them in one call; the shared experts and
  /// LatentMoE's projections are TE Linears.
  QuantizedTensor tensor = QuantizedTensor::kOperand;
};

/// How one grouped GEMM call of the routed experts runs. Unfused (the defaults), its `batch`
/// GEMMs launch one by one and quantize kernels cast its operands; under Transformer Engine's
/// fused grouped MLP one CuTe DSL kernel runs them all, and where the GEMM beside it writes this
/// one's quantized operand in its epilogue, no cast kernel runs (the epilogue bytes: what the
/// forward's or the dgrad's epilogue reads and writes beyond the GEMM's own operands).
struct GroupedCall {
  bool one_kernel = false;
  bool cast_input = true;
  bool cast_gradient = true;
  double forward_epilogue_bytes = 0.0;
  double dgrad_epilogue_bytes = 0.0;
};

/// `batch` GEMMs C[m,n] = A[m,k] B[k,n] (one per local expert) and their data and weight
/// gradients, each with the forward's FLOPs (Narayanan et al. 2021, Appendix); the weight
/// gradient also reads the gradient it accumulates into. Unless `call` fuses them, each of the
/// `batch` GEMMs is its own kernel launch from one framework call: Transformer Engine's GroupedLinear issues one cuBLAS
/// GEMM per expert over four streams (te_general_grouped_gemm -> nvte_multi_stream_cublas_gemm,
/// "for now, we only have multi-stream cublas backend"; transformer_engine/common/gemm/
/// cublaslt_gemm.cu); a block-scaled one first swizzles each operand's scales over all the experts
/// in one launch (scale_swizzle_kernels). A quantized GEMM casts its input before the forward and
/// its output gradient before the backward GEMMs, and keeps the input's quantized copy
/// (`saved_elements` of it) instead of the 16-bit one.
void grouped_linear(std::vector<Operator>& fwd, std::vector<Operator>& bwd, std::string_view name,
                    std::string_view dgrad, std::string_view wgrad, GemmShape g, double e, double saved_elements,
                    const Quantized& quantized = {}, const GroupedCall& call = {}) {
  const OperatorContext* q = quantized.context;
  const bool low = q != nullptr && is_low_precision(q->precision);
  const auto gemm = [&](std::string_view n, OpPass pass, GemmShape shape) {
    Operator op = make(n, pass, OpKind::kGemm);
    op.gemm = shape;
    op.flops = Flops(2.0 * shape.batch * shape.m * shape.n * shape.k);
    op.bytes = Bytes(shape.batch * (shape.m * shape.k + shape.k * shape.n + shape.m * shape.n) * e);
    op.low_precision = low;
    op.kernels = (call.one_kernel ? 1.0 : shape.batch) + (low ? scale_swizzle_kernels(q->precision) : 0.0);
    op.host_calls = 1.0;
    return op;
  };
  if (low && call.cast_input)
    fwd.push_back(quantize(quantized.input_cast, OpPass::kForward, g.batch * g.m * g.k, e, *q, quantized.tensor));
  Operator f = gemm(name, OpPass::kForward, g);
  f.saved = Bytes(saved_elements * (low ? quantized_bytes_per_element(q->precision) : e));
  f.bytes += Bytes(call.forward_epilogue_bytes);
  fwd.push_back(f);
  Operator d = gemm(dgrad, OpPass::kBackward, {g.batch, g.m, g.k, g.n});
  d.bytes += Bytes(call.dgrad_epilogue_bytes);
  bwd.push_back(d);
  Operator w = gemm(wgrad, OpPass::kWeightGrad, {g.batch, g.k, g.n, g.m});
  w.bytes += Bytes(g.batch * g.k * g.n * e);
  bwd.push_back(w);
  // Pushed after the backward GEMMs, since the backward list is reversed: it runs before them.
  if (low && call.cast_gradient)
    bwd.push_back(quantize(quantized.gradient_cast, OpPass::kBackward, g.batch * g.m * g.n, e, *q, quantized.tensor));
}

/// A memory-bound kernel over `elements`, reading and writing `streams` tensors of them.
Operator memory(std::string_view name, OpPass pass, double elements, double streams, double e,
                double flops_per_element) {
  Operator op = make(name, pass, OpKind::kMemory);
  op.elements = elements;
  op.bytes = Bytes(streams * elements * e);
  op.flops = Flops(flops_per_element * elements);
  return op;
}

/// The shared experts beside the routed ones: a dense MLP of shared_experts x shared_ffn over the
/// rank's own tokens, split over tp as the dense MLP, checkpointed whole under the shared_experts
/// recompute module.
void append_shared_experts(const workload::TransformerShape& shape, const OperatorContext& c, bool norm_recomputed,
                           std::vector<Operator>& fwd, std::vector<Operator>& bwd) {
  const workload::MoeShape& m = *shape.moe;
  const double e = c.activation_bytes;
  const double h = shape.hidden;
  const double tokens = c.micro_batch * c.seq / c.cp;  // the dense GEMMs' rows, as layer_operators
  const std::size_t shared_begin = fwd.size();
  const double width = static_cast<double>(m.shared_experts) * m.shared_ffn / c.tp;
  const double shared_up = (shape.gated_mlp ? 2.0 : 1.0) * width;
  const Quantized shared{&c, "quantize shared expert input", "quantize shared expert output gradient"};
  // In 16-bit its input is the tensor the router keeps already; quantized, it keeps its own copy
  // (none where the norm runs again: Megatron-Core then keeps the 16-bit input, which it discards).
  const double own_input = is_low_precision(c.precision) && !norm_recomputed ? routed_tokens_per_gpu(c) * h : 0.0;
  grouped_linear(fwd, bwd, "shared expert gate+up", "shared expert gate+up (dgrad)", "shared expert gate+up (wgrad)",
                 {1.0, tokens, shared_up, h}, e, own_input, shared);
  const double shared_inner = tokens * width;
  fwd.push_back(memory("shared expert swiglu", OpPass::kForward, shared_inner, 3.0, e, 6.0));
  fwd.back().saved = Bytes(2.0 * shared_inner * e);
  bwd.push_back(memory("shared expert swiglu backward", OpPass::kBackward, shared_inner, 5.0, e, 10.0));
  grouped_linear(fwd, bwd, "shared expert down", "shared expert down (dgrad)", "shared expert down (wgrad)",
                 {1.0, tokens, h, width}, e, shared_inner, shared);
  for (std::size_t i = shared_begin; i < fwd.size(); ++i) {
    fwd[i].recompute_module = plan::kRecomputeSharedExperts;
    // Checkpointed whole: they keep only their input, the tensor the router keeps.
    if (recomputes(c, plan::kRecomputeSharedExperts)) fwd[i].saved = Bytes(0.0);
  }
}

/// A copy of `elements` values in the forward (one read, one write) and its inverse in the backward.
void row_copy(std::vector<Operator>& fwd, std::vector<Operator>& bwd, std::string_view name,
              std::string_view backward_name, double elements, double e) {
  fwd.push_back(memory(name, OpPass::kForward, elements, 2.0, e, 0.0));
  bwd.push_back(memory(backward_name, OpPass::kBackward, elements, 2.0, e, 0.0));
}

/// The experts' activation over the `inner` values a rank's rows make (GPT-OSS's clamp before
/// it), run again under moe_act recompute.
void append_expert_activation(const workload::TransformerShape& shape, const OperatorContext& c, double inner,
                              std::vector<Operator>& fwd, std::vector<Operator>& bwd) {
  const double e = c.activation_bytes;
  // GPT-OSS's clamp runs before Megatron-Core's fused activation, outside it
  // (weighted_bias_quick_geglu_impl: each half clamped, then a cat): forward, two clamps reading
  // and writing a half each and the cat reading and writing the whole. Autograd keeps the clamps'
  // input, the gate+up output, beside the fused activation's input, the cat's output; under
  // moe_act recompute the checkpoint keeps its input, the gate+up output, alone (the
  // activation's saving below). Backward, each clamp's gradient reads the gradient and the input
  // and writes, and chunk's backward joins the halves.
  if (shape.gated_mlp && shape.moe->glu_clamp > 0.0) {
    const double gate_up = 2.0 * inner;
    fwd.push_back(memory("expert glu clamp", OpPass::kForward, gate_up, 4.0, e, 1.0));
    fwd.back().kernels = 3.0;
    fwd.back().saved = Bytes(recomputes(c, plan::kRecomputeMoeAct) ? 0.0 : gate_up * e);
    fwd.back().recompute_module = plan::kRecomputeMoeAct;
    bwd.push_back(memory("expert glu clamp backward", OpPass::kBackward, gate_up, 5.0, e, 1.0));
    bwd.back().kernels = 3.0;
  }
  // The activation also multiplies each row by its routing weight (Megatron-Core's
  // activation_func_with_probs, moe/experts.py); the rows' weights it keeps (one value a row,
  // under 0.1% of the SwiGLU's inputs here) are left out.
  if (shape.gated_mlp) {
    fwd.push_back(memory("expert swiglu", OpPass::kForward, inner, 3.0, e, 6.0));
    fwd.back().saved = Bytes(2.0 * inner * e);
    bwd.push_back(memory("expert swiglu backward", OpPass::kBackward, inner, 5.0, e, 10.0));
  } else {
    fwd.push_back(memory("expert gelu", OpPass::kForward, inner, 2.0, e, 8.0));
    fwd.back().saved = Bytes(inner * e);
    bwd.push_back(memory("expert gelu backward", OpPass::kBackward, inner, 3.0, e, 12.0));
  }
  fwd.back().recompute_module = plan::kRecomputeMoeAct;
}

/// Experts with biases (GPT-OSS): the down projection returns its bias unadded
/// (skip_bias_add=True) and Megatron-Core adds it after, weighted by each row's routing
/// probability, one of the rank's `local` experts at a time in eager PyTorch
/// (TEGroupedMLP._apply_bias: cat([t + b * p for each expert's rows])), over the `out` values of
/// its rows: b * p written, t + b p read twice and written, the cat read and written, two kernels
/// an expert and one. Backward, per expert, the bias gradient (grad x p, summed over rows) and the
/// probability gradient (grad x b, summed over h), each a product written and read again; split's
/// backward joins the experts' gradients with a cat. Taken in the activations' 16-bit width
/// (routing weights may be wider).
void append_expert_down_bias(double out, double local, double e, std::vector<Operator>& fwd,
                             std::vector<Operator>& bwd) {
  fwd.push_back(memory("expert down bias x routing weight", OpPass::kForward, out, 6.0, e, 2.0));
  fwd.back().kernels = 2.0 * local + 1.0;
  bwd.push_back(memory("expert down bias x routing weight backward", OpPass::kBackward, out, 8.0, e, 4.0));
  bwd.back().kernels = 4.0 * local + 1.0;
}

/// The routed experts as Transformer Engine's fused grouped MLP runs them under MXFP8 on
/// compute capability 10.x (transformer_engine/pytorch/ops/fused/: ForwardGroupedMLP_
/// CuTeGEMMSwiGLU_MXFP8 and BackwardGroupedMLP_CuTeGEMMDSwiGLU, CuTe DSL kernels of cuDNN's
/// front end; TE 2.14 release notes, "fused GEMM + SwiGLU grouped MLP for MXFP8"). Forward: the
/// input is group-quantized (one cast), then one kernel runs every local expert's gate+up GEMM
/// and, in its epilogue, the SwiGLU times the routing weights, writing the 16-bit SwiGLU input it
/// keeps and the down GEMM's MXFP8 input row- and column-wise; one kernel runs the down GEMMs.
/// Backward: the down GEMM's output gradient is group-quantized (one cast), one kernel runs the
/// down dgrad with the SwiGLU backward and the cast of the gate+up output gradient in its
/// epilogue (reading the kept SwiGLU input), and the weight gradients and the gate+up dgrad run
/// as single grouped GEMMs over grouped tensors. The activation's own kernels and the two casts
/// the epilogues write are gone; what the fused op keeps is the unfused one's (the 16-bit SwiGLU
/// input, the quantized down input).
/// `f` is each expert's inner width (the down GEMM's k).
void append_fused_experts(const OperatorContext& c, GemmShape gate_up, double f, double e, const Quantized& expert,
                          std::vector<Operator>& fwd, std::vector<Operator>& bwd) {
  const double q = quantized_bytes_per_element(c.precision);
  const double rows = gate_up.batch * gate_up.m;
  const double w = gate_up.k;
  const double inner = rows * f;
  // Gate+up: its epilogue writes the down GEMM's input, row- and column-wise; its backward's
  // gradient comes cast from the down dgrad's epilogue. It keeps its input quantized and the
  // 16-bit SwiGLU input (2 x inner).
  grouped_linear(
      fwd, bwd, "expert gate+up + swiglu (fused grouped)", "expert gate+up (grouped dgrad)",
      "expert gate+up (grouped wgrad)", gate_up, e, rows * w, expert,
      {.one_kernel = true, .cast_input = true, .cast_gradient = false, .forward_epilogue_bytes = 2.0 * inner * q});
  fwd.back().saved += Bytes(2.0 * inner * e);
  // Down: its input comes cast from the gate+up epilogue; its dgrad's epilogue reads the kept
  // SwiGLU input and writes the gate+up output gradient cast, row- and column-wise.
  grouped_linear(fwd, bwd, "expert down (fused grouped)", "expert down dgrad + swiglu backward (fused grouped)",
                 "expert down (grouped wgrad)", {gate_up.batch, gate_up.m, w, f}, e, inner, expert,
                 {.one_kernel = true,
                  .cast_input = false,
                  .cast_gradient = true,
                  .dgrad_epilogue_bytes = 2.0 * inner * e + 2.0 * 2.0 * inner * q});
}

}  // namespace

double routed_tokens_per_gpu(const OperatorContext& c) {
  // A context-parallel rank holds s/cp tokens of each of its b sequences, and its MoE layers
  // route only those: Megatron-Core's token dispatchers take the layer's own hidden states,
  // [S/TP, B, H] under sequence parallel with S the rank's sequence shard, and exchange them over
  // the expert-parallel group (token_dispatcher.py, num_local_tokens = S/TP*B); its MoE guide
  // lists context parallel as dividing activation memory by cp, and folds cp into the expert
  // groups (parallel_state.py: expert data parallel = tp x cp x dp / (etp x ep)).
  return c.micro_batch * c.seq / c.cp / (c.sequence_parallel ? c.tp : 1.0);
}

double expert_rows_per_gpu(const workload::TransformerShape& shape, const OperatorContext& c) {
  STEPCAST_ASSERT(shape.moe.has_value(), "expert rows need an MoE shape");
  // The etp x ep ranks of an expert group hold every expert once between them and take the
  // tokens of all of them: etp x ep x (b s / (cp tp)) tokens (each rank's own under sequence
  // parallel; without it, tp = etp ranks that hold the same b s / cp), top-k copies each, over E
  // experts. A rank holds E/ep experts (1/etp of each) and computes all their rows:
  // (E/ep) x etp x ep x (b s / (cp tp)) x k / E = etp x (b s / (cp tp)) x k; times the busiest
  // rank's load.
  const double unique_tokens = routed_tokens_per_gpu(c) / (c.sequence_parallel ? 1.0 : c.tp);
  return c.experts.etp * unique_tokens * shape.moe->top_k * c.experts.load_factor;
}

void append_moe_mlp(const workload::TransformerShape& shape, const OperatorContext& c, std::vector<Operator>& fwd,
                    std::vector<Operator>& bwd) {
  STEPCAST_ASSERT(shape.moe.has_value(), "append_moe_mlp needs an MoE shape");
  const workload::MoeShape& m = *shape.moe;
  const double e = c.activation_bytes;
  const double h = shape.hidden;
  // The tokens the router, the permute and the dispatch take: the rank's b s / cp, split again
  // under sequence parallel.
  const double routed = routed_tokens_per_gpu(c);
  const double experts = m.experts;
  const double k = m.top_k;
  const std::size_t begin = fwd.size();

  // Router: scores = x W_r (h x E), then softmax or sigmoid and top-k over the E scores of each token.
  // It keeps its input, the pre-MLP norm's output, unless that norm runs again (layernorm recompute).
  const bool norm_recomputed = recomputes(c, plan::kRecomputeLayernorm);
  grouped_linear(fwd, bwd, "router", "router (dgrad)", "router (wgrad)", {1.0, routed, experts, h}, e,
                 norm_recomputed ? 0.0 : routed * h);
  fwd.push_back(memory("router top-k", OpPass::kForward, routed * experts, 2.0, e, 5.0));
  fwd.back().saved = Bytes(routed * experts * e);  // the routing probabilities, for their gradient
  bwd.push_back(memory("router top-k backward", OpPass::kBackward, routed * experts, 2.0, e, 3.0));
  // LatentMoE: the routed tokens projected to the latent width before the permute, the
  // dispatch and the experts (Megatron-Core's fc1_latent_proj, duplicated on every tp rank and
  // run on the rank's own tokens); its input is the tensor the router keeps.
  const double w = shape.expert_width();
  const bool latent = m.latent > 0;
  const Quantized projection{&c, "quantize latent projection input", "quantize latent projection output gradient"};
  if (latent) {
    const double own_input = is_low_precision(c.precision) && !norm_recomputed ? routed * h : 0.0;
    grouped_linear(fwd, bwd, "latent down projection", "latent down projection (dgrad)",
                   "latent down projection (wgrad)", {1.0, routed, w, h}, e, own_input, projection);
  }
  // Permute: copy each token k times, ordered by expert, before the dispatch all-to-all.
  const double copies = routed * k * w;
  row_copy(fwd, bwd, "token permute (dispatch)", "token permute backward", copies, e);

  // Experts: one grouped GEMM per projection over the rank's E/ep experts, each expert taking
  // its share of the rank's rows (tokens per expert), the inner width split over etp.
  const double local = experts / c.experts.ep;
  const double rows = expert_rows_per_gpu(shape, c);
  const double per_expert = rows / local;
  const double f = m.expert_ffn / c.experts.etp;
  const double up = (shape.gated_mlp ? 2.0 : 1.0) * f;
  // The all-to-all dispatcher's second permutation: the rows a rank receives (its share of the
  // expert group's rows, before any expert-TP gather) sorted from source-rank blocks into
  // local-expert order, one read and one write, when the rank holds more than one expert and
  // receives from more than one rank (Megatron-Core's MoEAlltoAllTokenDispatcher,
  // sort_chunks_by_idxs; from one rank they arrive in expert order); the combine restores them.
  const bool regroups = c.experts.regroups_by_expert && local > 1.0 && c.experts.ep > 1.0;
  const double received = rows / c.experts.etp * w;
  if (regroups)
    row_copy(fwd, bwd, "regroup rows by expert (dispatch)", "regroup rows by expert (dispatch) backward", received, e);
  const Quantized expert{&c, "quantize expert input", "quantize expert output gradient",
                         QuantizedTensor::kGroupedOperand};
  if (c.experts.fused_mlp) {
    append_fused_experts(c, {local, per_expert, up, w}, f, e, expert, fwd, bwd);
  } else {
    const double inner = rows * f;
    grouped_linear(fwd, bwd, "expert gate+up (grouped)", "expert gate+up (grouped dgrad)",
                   "expert gate+up (grouped wgrad)", {local, per_expert, up, w}, e, rows * w, expert);
    append_expert_activation(shape, c, inner, fwd, bwd);
    // Under moe_act recompute the activation's output, the down GEMM's input, is discarded and
    // made again before the down GEMM's backward (Megatron-Core's output-discarding checkpoint).
    const double down_input = recomputes(c, plan::kRecomputeMoeAct) ? 0.0 : inner;
    grouped_linear(fwd, bwd, "expert down (grouped)", "expert down (grouped dgrad)", "expert down (grouped wgrad)",
                   {local, per_expert, w, f}, e, down_input, expert);
  }
  if (m.expert_biases) append_expert_down_bias(rows * w, local, e, fwd, bwd);
  if (regroups)
    row_copy(fwd, bwd, "restore rows by source (combine)", "restore rows by source (combine) backward", received, e);
  // Unpermute: after the combine all-to-all, each token's k copies summed. The experts applied
  // the routing weights already, so the sum keeps nothing for the backward.
  fwd.push_back(memory("token unpermute (combine)", OpPass::kForward, copies, 2.0, e, 2.0));
  bwd.push_back(memory("token unpermute backward", OpPass::kBackward, copies, 2.0, e, 2.0));
  // LatentMoE: the combined tokens back to h (fc2_latent_proj), keeping its latent input.
  if (latent) {
    grouped_linear(fwd, bwd, "latent up projection", "latent up projection (dgrad)", "latent up projection (wgrad)",
                   {1.0, routed, h, w}, e, routed * w, projection);
  }

  if (m.shared_experts > 0) append_shared_experts(shape, c, norm_recomputed, fwd, bwd);
  if (recomputes(c, plan::kRecomputeMoe)) {
    // Checkpointed whole (MoELayer's moe_layer_recompute, tensor_parallel.checkpoint over its
    // forward): it keeps its input alone, the tensor the router kept, and runs everything again.
    for (std::size_t i = begin; i < fwd.size(); ++i) {
      fwd[i].recompute_module = plan::kRecomputeMoe;
      if (i != begin) fwd[i].saved = Bytes(0.0);
    }
  }
}

namespace {

/// Adds `count` layers of `kind` to a list of kinds and counts.
void add_kind(std::vector<std::pair<LayerKind, int>>& kinds, LayerKind kind, int count) {
  const auto same = std::find_if(kinds.begin(), kinds.end(), [&kind](const auto& k) { return k.first == kind; });
  if (same != kinds.end()) {
    same->second += count;
  } else {
    kinds.push_back({kind, count});
  }
}

}  // namespace

Bf16Layers bf16_layers(const plan::Plan& plan) {
  if (!is_low_precision(plan.precision)) return {};
  return {plan.bf16_first_layers, plan.bf16_last_layers, plan.mtp_bf16};
}

bool one_layer_kind(const workload::TransformerShape& shape, Bf16Layers bf16) {
  return !shape.moe && shape.sliding_window == 0 && !shape.hybrid && !bf16.any_layer();
}

std::vector<std::pair<LayerKind, int>> layer_kinds(const workload::TransformerShape& shape, int first, int count,
                                                   Bf16Layers bf16) {
  std::vector<std::pair<LayerKind, int>> out;
  if (one_layer_kind(shape, bf16)) {
    if (count > 0) out.push_back({LayerKind{false, false, shape.block(first)}, count});
    return out;
  }
  for (int i = first; i < first + count; ++i) {
    // Sliding layers spread evenly: layer i is one when the running count steps at it
    // (GPT-OSS's 18 of 36: every other layer).
    const long sl = shape.sliding_window > 0 ? shape.sliding_layers : 0;
    const bool sliding =
        sl > 0 && (static_cast<long>(i) + 1) * sl / shape.layers > static_cast<long>(i) * sl / shape.layers;
    const bool kept = i < bf16.first || i >= shape.layers - bf16.last;
    add_kind(out, LayerKind{shape.is_moe_layer(i), sliding, shape.block(i), kept}, 1);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::vector<std::pair<LayerKind, int>> stage_layer_kinds(const workload::TransformerShape& shape,
                                                         const plan::LayerMap& map, int stage, Bf16Layers bf16) {
  std::vector<std::pair<LayerKind, int>> out;
  for (int c = 0; c < map.vp; ++c) {
    for (const auto& [kind, count] : layer_kinds(shape, map.first_decoder(stage, c), map.at(stage, c).decoders, bf16)) {
      add_kind(out, kind, count);
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace stepcast::cost
