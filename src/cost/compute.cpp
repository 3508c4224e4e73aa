// FLOPs per step (Narayanan et al. 2021, section 5.1 and Appendix) and compute time from the
// operator list: each kernel on the GPU's roofline, kernels issued by the host in order, the
// stream of one micro-batch's pass timed as a two-stage pipeline (host issues, GPU runs).
#include "stepcast/cost/compute.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/launch_stream.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/moe_memory.hpp"
#include "stepcast/cost/muon.hpp"
#include "stepcast/cost/peft.hpp"

namespace stepcast::cost {

double passes_of_transformer(plan::Recompute recompute) {
  // Forward 1 + backward 2 (Narayanan et al. 2021, Appendix: backward is twice the forward);
  // full recompute runs the forward once more.
  return recompute == plan::Recompute::kFull ? 4.0 : 3.0;
}

namespace {

/// The forward and backward streams of one part of the model, and its weight-gradient GPU time.
struct PartStreams {
  LaunchStream forward;
  LaunchStream backward;
  Seconds weight_grad;
};

PartStreams time_part(const std::vector<Operator>& ops, const topology::GpuSpec& gpu, plan::Precision precision,
                      const KernelParams& params, std::vector<KernelTime>* times) {
  PartStreams out;
  for (const Operator& op : ops) {
    const KernelTime t = time_operator(op, gpu, precision, params);
    if (times) times->push_back(t);
    if (op.pass == OpPass::kForward) {
      out.forward = out.forward.then(LaunchStream::of(t.host, t.gpu));
    } else {
      out.backward = out.backward.then(LaunchStream::of(t.host, t.gpu));
      if (op.pass == OpPass::kWeightGrad) out.weight_grad += t.gpu;
    }
  }
  return out;
}

/// The first kind of layer that holds attention (a hybrid's first layer may not): context
/// parallel's ring steps run beside its attention kernels.
LayerKind attention_kind(const workload::TransformerShape& shape) {
  const LayerKind first = layer_kinds(shape, 0, 1).front().first;
  if (first.has_attention()) return first;
  for (const auto& [kind, count] : layer_kinds(shape, 0, shape.layers)) {
    if (kind.has_attention()) return kind;
  }
  return first;
}

/// The estimate's fused attention of one layer, forward and backward, from that layer's operators.
void add_attention_times(ComputeEstimate& out, const std::vector<Operator>& layer, const topology::GpuSpec& gpu,
                         plan::Precision precision) {
  for (const Operator& op : layer) {
    if (op.kind != OpKind::kFusedAttention) continue;
    const Seconds t = time_operator(op, gpu, precision, out.params).gpu;
    if (op.pass == OpPass::kForward) out.attention_forward += t;
    if (op.pass == OpPass::kBackward) out.attention_backward += t;
  }
}

/// A stage's totals gain one of its chunks (of `decoders` transformer layers).
void add_chunk(StageCompute& st, const ChunkCompute& chunk, int decoders) {
  st.forward += chunk.forward;
  st.backward += chunk.backward;
  st.weight_grad += chunk.weight_grad;
  st.layers += decoders;
  st.moe_blocks += chunk.moe_blocks;
  st.chunks.push_back(chunk);
}

/// The old model: hardware FLOPs / GPUs / (peak x fraction), the same on every stage.
void price_by_fraction(ComputeEstimate& out, const plan::Plan& plan, const workload::TransformerShape& shape,
                       double fraction) {
  out.operator_model = false;
  out.achieved_fraction = fraction;
  out.achieved = out.peak * fraction;
  out.time = (out.flops.hardware / plan.gpus()) / out.achieved;
  // A frozen model (peft=lora) runs no weight-gradient pass.
  const bool frozen = plan.peft == plan::Peft::kLora;
  const double passes = passes_of_transformer(plan.recompute) - (frozen ? 1.0 : 0.0);
  const Seconds per_microbatch = out.time / plan.micro_batches();
  StageCompute stage;
  stage.forward = per_microbatch / passes;
  stage.backward = per_microbatch * ((passes - 1.0) / passes);
  stage.weight_grad = frozen ? Seconds(0.0) : stage.backward * 0.5;
  const double even = static_cast<double>(shape.layers) / plan.pp;
  // Each chunk's share of the time follows its layers (the layer map's split).
  const plan::LayerMap map = plan::layer_map(plan, shape.layers, 0);
  out.stages.assign(static_cast<std::size_t>(plan.pp), StageCompute{});
  for (int s = 0; s < plan.pp; ++s) {
    StageCompute& st = out.stages[static_cast<std::size_t>(s)];
    for (int c = 0; c < map.vp; ++c) {
      const int layers = map.at(s, c).decoders;
      const double share = layers / even;
      add_chunk(st, {stage.forward * share, stage.backward * share, stage.weight_grad * share, layers, 0.0}, layers);
    }
    if (st.layers > out.stages[static_cast<std::size_t>(out.critical_stage)].layers) out.critical_stage = s;
  }
  const StageCompute& critical = out.stages[static_cast<std::size_t>(out.critical_stage)];
  out.time = (critical.forward + critical.backward) * plan.micro_batches();
}

void explain_compute(ComputeEstimate& out, const workload::Workload& workload, const plan::Plan& plan,
                     const topology::GpuSpec& gpu, const ComputeOptions& options) {
  const auto& s = *workload.shape;
  auto& ex = out.explanation;
  // A hybrid stack's layers differ: each counts its own matmul parameters, attention scores or SSD scan.
  const std::string per_layer =
      s.hybrid ? fmt::format(
                     "tokens x the {} layers of {} (each 2 x its matmul params, + 4sh attention, + the "
                     "SSD scan Mamba-2)",
                     s.layers, s.hybrid->pattern)
               : fmt::format("l={} x tokens x (2 x matmul params + 4sh)", s.layers);
  ex.push_back(
      {"model FLOPs",
       fmt::format("3 passes x ({} + tokens x 2hV), tokens = {} x {}", per_layer, plan.global_batch, plan.seq_len),
       format_flops(out.flops.model)});
  if (plan.pp > 1) {
    // Where the layers sit (Megatron-Core's placement; E embedding, m MTP modules, L loss).
    for (const plan::LayerMapRow& row : plan::layer_map_rows(plan::layer_map(plan, s.layers, s.mtp_layers))) {
      ex.push_back({"layer map, " + row.stages, row.chunks, fmt::format("{} layers", row.layers)});
    }
  }
  const Bf16Layers bf16 = bf16_layers(plan);
  const bool mtp_bf16 = bf16.mtp && s.mtp_layers > 0;
  if (bf16.any_layer() || mtp_bf16) {
    // Megatron-Core's first_last_layers_bf16 and keep_mtp_spec_in_bf16: outside the autocast.
    ex.push_back({"layers in bf16",
                  fmt::format("the first {} and the last {} of {} layers{}, their GEMMs in bf16 and nothing "
                              "quantized (first_last_layers_bf16{})",
                              bf16.first, bf16.last, s.layers, mtp_bf16 ? " and the MTP modules" : "",
                              mtp_bf16 ? ", keep_mtp_spec_in_bf16" : ""),
                  fmt::format("{} layers", bf16.first + bf16.last + (mtp_bf16 ? s.mtp_layers : 0))});
  }
  ex.push_back({"hardware FLOPs", fmt::format("model FLOPs + recompute={}", plan::to_string(plan.recompute)),
                format_flops(out.flops.hardware)});
  if (!out.operator_model) {
    ex.push_back({"achieved rate",
                  fmt::format("{} peak ({}) x {:.3f} achieved fraction (given)", gpu.name, format_flops_rate(out.peak),
                              out.achieved_fraction),
                  format_flops_rate(out.achieved)});
    ex.push_back({"compute time",
                  fmt::format("{} / {} GPUs / {}", format_flops(out.flops.hardware), plan.gpus(),
                              format_flops_rate(out.achieved)),
                  format_seconds(out.time)});
    return;
  }
  const KernelParams& p = out.params;
  const std::string figures = kernel_figure_sources(gpu, plan);
  const std::string sources = p.source.empty() ? figures : fmt::format("{}; {}", p.source, figures);
  ex.push_back(
      {"kernel model",
       fmt::format("GEMM {:.3f} of peak x tile/wave quantization on {} SMs; HBM {:.2f} of {}; attention {:.2f}/{:.2f} "
                   "(fwd/bwd); {} per kernel on the GPU, {} on the host{}",
                   p.gemm_efficiency, gpu.sm_count, p.memory_efficiency, format_bandwidth(gpu.memory_bandwidth),
                   p.attention_forward_efficiency, p.attention_backward_efficiency, format_seconds(p.kernel_overhead),
                   format_seconds(p.host_overhead), options.kernel_params ? " (calibrated)" : ""),
       sources});
  if (out.offload) {
    const std::vector<int> windows = offload_windows(s.layers, plan.offload_layers);
    ex.push_back(
        {"activation offload",
         fmt::format("{} of {} layers' activations, {} each, over the host link at {}: {} a layer each way, beside "
                     "windows of {}-{} layers (Transformer Engine's layer_window_map); waits of one micro-batch, "
                     "forward + backward",
                     plan.offload_layers, s.layers, format_bytes(mean_layer_activation_bytes(s, plan)),
                     format_bandwidth(*options.host_bandwidth), format_seconds(out.offload->copy),
                     *std::min_element(windows.begin(), windows.end()),
                     *std::max_element(windows.begin(), windows.end())),
         fmt::format("{} + {}", format_seconds(out.offload->forward), format_seconds(out.offload->backward))});
  }
  for (std::size_t i = 0; i < out.stages.size(); ++i) {
    const StageCompute& st = out.stages[i];
    ex.push_back({fmt::format("stage {} micro-batch", i),
                  fmt::format("{:.4g} layers{}{}{}: forward + backward", st.layers, i == 0 ? " + embedding" : "",
                              i + 1 == out.stages.size() ? " + output layer and loss" : "",
                              out.offload ? " + the offload's waits" : ""),
                  fmt::format("{} + {}", format_seconds(st.forward), format_seconds(st.backward))});
  }
  ex.push_back(
      {"compute time",
       fmt::format("{} micro-batches x (forward + backward) of stage {}", plan.micro_batches(), out.critical_stage),
       format_seconds(out.time)});
  ex.push_back({"achieved rate",
                fmt::format("hardware FLOPs / {} GPUs / compute time = {:.3f} of {} peak", plan.gpus(),
                            out.achieved_fraction, format_flops_rate(out.peak)),
                format_flops_rate(out.achieved)});
  ex.push_back({"optimizer step",
                fmt::format("{:.4g} parameters per GPU through the optimizer's kernels",
                            optimizer_parameters_per_gpu(workload, plan)),
                format_seconds(out.optimizer)});
}

/// One kind of block's operators, their times and streams.
struct KindTiming {
  LayerKind kind;
  std::vector<Operator> ops;
  std::vector<KernelTime> times;
  PartStreams streams;
};

/// One micro-batch through a model chunk holding `held` (its blocks by kind in `kinds`): the
/// model's first chunk also runs the embedding, its last the output layer and loss once for the
/// model and once per MTP module.
template <typename TimingOf>
ChunkCompute time_chunk(const plan::ChunkContent& held, const std::vector<std::pair<LayerKind, int>>& kinds,
                        const PartStreams& embedding, const PartStreams& head, TimingOf&& timing_of) {
  const double heads = held.loss ? 1.0 + held.mtp : 0.0;
  LaunchStream forward = held.embedding ? embedding.forward : LaunchStream{};
  LaunchStream backward = heads > 0.0 ? head.backward.times(heads) : LaunchStream{};
  ChunkCompute chunk;
  chunk.weight_grad = (held.embedding ? embedding.weight_grad : Seconds(0.0)) + head.weight_grad * heads;
  for (const auto& [kind, count] : kinds) {
    const KindTiming& k = timing_of(kind);
    forward = forward.then(k.streams.forward.times(count));
    backward = backward.then(k.streams.backward.times(count));
    chunk.weight_grad += k.streams.weight_grad * count;
    chunk.moe_blocks += kind.moe ? count : 0;
    chunk.attention_blocks += kind.has_attention() ? count : 0;
    chunk.mamba_blocks += kind.block == workload::Block::kMamba ? count : 0;
  }
  if (heads > 0.0) forward = forward.then(head.forward.times(heads));
  if (held.embedding) backward = backward.then(embedding.backward);
  chunk.forward = forward.makespan;
  chunk.backward = backward.makespan;
  chunk.layers = held.decoders + held.mtp;
  return chunk;
}

/// offload-layers=: the copies' waits inside the stage's forward and backward (a rule keeps offload
/// to one stage of one chunk), its layers' mean times setting the windows. Returns the stage's
/// forward + backward.
template <typename TimingOf>
Seconds add_offload_waits(ComputeEstimate& out, const workload::TransformerShape& shape, const plan::Plan& plan,
                          const plan::LayerMap& map, const ComputeOptions& options, TimingOf&& timing_of) {
  STEPCAST_ASSERT(options.host_bandwidth.has_value(), "offload-layers= needs the host link's bandwidth");
  LaunchStream forward;
  LaunchStream backward;
  for (const auto& [kind, count] : stage_layer_kinds(shape, map, 0, bf16_layers(plan))) {
    forward = forward.then(timing_of(kind).streams.forward.times(count));
    backward = backward.then(timing_of(kind).streams.backward.times(count));
  }
  const OffloadWaits waits =
      offload_waits(shape.layers, plan.offload_layers, mean_layer_activation_bytes(shape, plan),
                    *options.host_bandwidth, forward.makespan / shape.layers, backward.makespan / shape.layers);
  StageCompute& st = out.stages.front();
  st.forward += waits.forward;
  st.backward += waits.backward;
  st.chunks.front().forward += waits.forward;
  st.chunks.front().backward += waits.backward;
  out.offload = waits;
  return st.forward + st.backward;
}

}  // namespace

Flops narayanan_step_flops(const workload::TransformerShape& shape, double batch_sequences, int seq_len,
                           bool full_recompute) {
  const double B = batch_sequences;
  const double s = seq_len;
  const double l = shape.layers;
  const double h = shape.hidden;
  const double V = shape.vocab;
  if (full_recompute) return Flops(96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h)));
  return Flops(72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h)));
}

namespace {

/// Matmul parameters of one block's attention: Q and O (h x q each), K and V (h x kv each); or
/// latent attention's five projections (DeepSeek-V2 section 2.1).
double attention_matmul_parameters(const workload::TransformerShape& shape) {
  const double h = shape.hidden;
  if (const auto& m = shape.mla) {
    const double heads = shape.heads;
    const double qk = m->qk_nope_head_dim + m->qk_rope_head_dim;
    const double q = m->q_lora_rank > 0 ? h * m->q_lora_rank + m->q_lora_rank * heads * qk : h * heads * qk;
    return q + h * (m->kv_lora_rank + m->qk_rope_head_dim) +
           m->kv_lora_rank * heads * (m->qk_nope_head_dim + m->v_head_dim) + heads * m->v_head_dim * h;
  }
  const double kv = static_cast<double>(shape.kv_heads) * shape.head_dim();
  return 2.0 * h * shape.query_width() + 2.0 * h * kv;
}

/// Matmul parameters a token passes through in one block's MLP: the dense MLP, or the router,
/// LatentMoE's projections, its top-k routed experts (on the expert width) and the shared experts.
double mlp_matmul_parameters(const workload::TransformerShape& shape, bool moe) {
  const double h = shape.hidden;
  const double matrices = shape.gated_mlp ? 3.0 : 2.0;
  if (!moe) return matrices * h * shape.ffn_hidden;
  const auto& m = *shape.moe;
  return h * m.experts + workload::latent_projection_parameters(shape) +
         matrices * static_cast<double>(shape.expert_width()) * m.top_k * m.expert_ffn +
         matrices * h * m.shared_experts * m.shared_ffn;
}

/// Matmul parameters a token passes through in one Mamba-2 mixer: in_proj and out_proj.
double mamba_matmul_parameters(const workload::TransformerShape& shape) {
  const workload::MambaShape& m = shape.hybrid->mamba;
  return static_cast<double>(shape.hidden) * (3.0 * m.inner() + 2.0 * m.groups * m.state + m.heads);
}

/// The SSD scan's products per token (operators.cpp's mamba_mixer): chunk scores Q N a group;
/// per head the masked scores applied to x (Q P), the chunk state (N P) and the output from the
/// state entering the chunk (N P); 2 FLOPs a multiply-add.
double ssd_flops(const workload::TransformerShape& shape) {
  const workload::MambaShape& m = shape.hybrid->mamba;
  const double q = m.chunk;
  return 2.0 * (static_cast<double>(m.groups) * q * m.state +
                static_cast<double>(m.heads) * m.head_dim * (q + 2.0 * m.state));
}

/// QK^T and (scores)V per token, 2 x keys x heads x (qk dim + v dim), over the keys the kernels
/// compute: fused attention skips the blocks above the causal diagonal, outside a window and
/// across packed documents (causal_keys_per_query, as fused_attention in operators.cpp times
/// them); the unfused kernels compute the whole s x s square and mask it (Narayanan et al.'s
/// count, 4sh for multi-head attention). MFU counted over the square would credit fused
/// attention with work it never does.
double attention_score_flops(const workload::TransformerShape& shape, const plan::Plan& plan, bool sliding) {
  const double s = plan.seq_len;
  const double keys =
      plan.flash_attention
          ? causal_keys_per_query(s, sliding ? static_cast<double>(shape.sliding_window) : 0.0, plan.doc_len)
          : s;
  return 2.0 * keys * shape.heads * (static_cast<double>(shape.qk_head_dim()) + shape.v_head_dim());
}

/// The share of a layer's forward GEMM and attention FLOPs (what step_flops counts) the selective
/// recompute modules other than the attention core run again, from its operator list (a ratio,
/// so the plan's sharding cancels).
double repeated_module_share(const workload::TransformerShape& shape, const plan::Plan& plan, LayerKind kind) {
  if (plan.recompute != plan::Recompute::kSelective || (plan.recompute_modules & ~plan::kRecomputeCoreAttn) == 0U) {
    return 0.0;
  }
  OperatorContext ctx = operator_context(plan);
  ctx.kind = kind;
  double forward = 0.0;
  double again = 0.0;
  for (const Operator& op : layer_operators(shape, ctx)) {
    if (op.kind == OpKind::kMemory) continue;
    if (op.pass == OpPass::kForward) forward += op.flops.value();
    if (op.pass == OpPass::kRecompute && op.recompute_module != plan::kRecomputeCoreAttn) again += op.flops.value();
  }
  return forward > 0.0 ? again / forward : 0.0;
}

}  // namespace

StepFlops step_flops(const workload::TransformerShape& shape, const plan::Plan& plan) {
  const double h = shape.hidden;
  const double s = plan.seq_len;
  const double tokens = static_cast<double>(plan.global_batch) * s;
  // Per kind of block: a multiply-add is 2 FLOPs per matmul parameter and token, plus the
  // attention scores. A dense model without windows has one kind, all its layers.
  double layer_forward = 0.0;
  double scores = 0.0;
  double scans = 0.0;          // a hybrid's SSD scans, which hold no weight either
  double modules_again = 0.0;  // the forward work selective recompute modules other than core_attn repeat
  for (const auto& [kind, count] : layer_kinds(shape, 0, shape.layers)) {
    const bool mamba = kind.block == workload::Block::kMamba;
    const double score = kind.has_attention() ? attention_score_flops(shape, plan, kind.sliding) : 0.0;
    const double matmul = (kind.has_attention() ? attention_matmul_parameters(shape) : 0.0) +
                          (kind.has_mlp() ? mlp_matmul_parameters(shape, kind.moe) : 0.0) +
                          (mamba ? mamba_matmul_parameters(shape) : 0.0);
    const double forward = count * tokens * (2.0 * matmul + score + (mamba ? ssd_flops(shape) : 0.0));
    layer_forward += forward;
    scores += count * tokens * score;
    scans += mamba ? count * tokens * ssd_flops(shape) : 0.0;
    modules_again += forward * repeated_module_share(shape, plan, kind);
  }
  double logits_forward = tokens * 2.0 * h * shape.vocab;
  if (shape.mtp_layers > 0) {
    // Each MTP module (DeepSeek-V3 section 2.2): its projection (2h x h), one more block (full
    // attention) and the shared output head again.
    const double block =
        2.0 * (attention_matmul_parameters(shape) + mlp_matmul_parameters(shape, shape.moe.has_value()) + 2.0 * h * h) +
        attention_score_flops(shape, plan, false);
    layer_forward += shape.mtp_layers * tokens * block;
    scores += shape.mtp_layers * tokens * attention_score_flops(shape, plan, false);
    logits_forward *= 1.0 + shape.mtp_layers;
  }
  // Forward, data gradient and weight gradient. A frozen model (peft=lora) computes no weight
  // gradient: one pass of its weight GEMMs goes, the attention scores and the SSD scans stay (they
  // hold no weight). The adapters' small GEMMs are left out of the count.
  const double frozen = plan.peft == plan::Peft::kLora ? layer_forward - scores - scans + logits_forward : 0.0;
  StepFlops out;
  out.model = Flops(3.0 * (layer_forward + logits_forward) - frozen);
  double hardware = passes_of_transformer(plan.recompute) * layer_forward + 3.0 * logits_forward - frozen;
  // Selective recompute of the attention core runs the scores again, and the other named modules
  // their share of the layer's forward.
  if (plan.recompute == plan::Recompute::kSelective) {
    if ((plan.recompute_modules & plan::kRecomputeCoreAttn) != 0U) hardware += scores;
    hardware += modules_again;
  }
  out.hardware = Flops(hardware);
  return out;
}

double optimizer_parameters_per_gpu(const workload::Workload& workload, const plan::Plan& plan) {
  if (workload.shape && workload.shape->moe) {
    // Dense and expert parameters split and sharded each their own way (moe_memory.cpp).
    const ExpertSplit split = expert_split(workload, plan);
    if (plan.zero_stage() == 0) return split.dense_per_gpu + split.expert_per_gpu;
    return split.dense_per_gpu / split.dense_shards + split.expert_per_gpu / split.expert_shards;
  }
  const double per_model_rank = parameters_per_model_rank(workload, plan).trained;
  return plan.zero_stage() >= 1 ? per_model_rank / plan.state_shards() : per_model_rank;
}

std::vector<Operator> step_optimizer_operators(const workload::Workload& workload, const plan::Plan& plan,
                                               bool fp8_any_layout) {
  std::vector<Operator> ops = optimizer_operators(optimizer_parameters_per_gpu(workload, plan), plan, fp8_any_layout,
                                                  parameters_per_model_rank(workload, plan).frozen);
  const std::vector<Operator> newton_schulz = newton_schulz_operators(workload, plan);
  ops.insert(ops.end(), newton_schulz.begin(), newton_schulz.end());
  return ops;
}

ComputeEstimate estimate_compute(const workload::Workload& workload, const plan::Plan& plan,
                                 const topology::GpuSpec& gpu, const ComputeOptions& options) {
  STEPCAST_ASSERT(workload.shape.has_value(), "estimate_compute needs a workload with a shape");
  const auto& shape = *workload.shape;
  ComputeEstimate out;
  out.flops = step_flops(shape, plan);
  out.peak = peak_rate(gpu, plan.precision);
  STEPCAST_ASSERT(out.peak.value() > 0.0, "estimate_compute needs a peak rate for the precision");
  const int m = plan.micro_batches();
  std::vector<KernelTime>* no_times = nullptr;
  const bool fp8_any_layout = fp8_gemm_any_layout(gpu);
  const auto optimizer_ops = step_optimizer_operators(workload, plan, fp8_any_layout);

  if (options.achieved_fraction) {
    price_by_fraction(out, plan, shape, *options.achieved_fraction);
    // The optimizer's bytes at the datasheet HBM bandwidth, as the single-fraction model did.
    out.params.memory_efficiency = 1.0;
    out.optimizer = time_part(optimizer_ops, gpu, plan.precision, out.params, no_times).forward.makespan;
    if (options.explain) explain_compute(out, workload, plan, gpu, options);
    return out;
  }
  if (gpu.sm_count < 1) {
    throw InputError(fmt::format(
        "the per-operator compute model needs the GPU's SM count: add \"sm_count\" to the topology's \"gpu\" "
        "block for {} (or price compute with --achieved-fraction)",
        gpu.name));
  }
  out.params = options.kernel_params ? *options.kernel_params : default_kernel_params(gpu, plan);
  OperatorContext ctx = operator_context(plan);
  ctx.fp8_any_layout = fp8_any_layout;
  const auto embedding_ops = embedding_operators(shape, ctx);
  const auto head_ops = head_operators(shape, ctx);
  std::vector<KernelTime> embedding_times;
  std::vector<KernelTime> head_times;
  std::vector<KernelTime> optimizer_times;
  const bool ex = options.explain;
  // One operator list per kind of block: a dense model without windows has one (the planner's
  // path). Otherwise at most five kinds of layer (dense or MoE x full or sliding attention; a
  // hybrid's Mamba, full and sliding attention, dense and MoE MLP), twice that with layers kept
  // in bf16, and the MTP block. Reserved whole, so the references timing_of returns stay valid.
  const Bf16Layers bf16 = bf16_layers(plan);
  const bool one_kind = one_layer_kind(shape, bf16) && shape.mtp_layers == 0;
  const std::size_t most_kinds = one_kind ? 1 : (bf16.any_layer() ? 10 : 5) + 1;
  std::vector<KindTiming> kinds;
  kinds.reserve(most_kinds);
  const auto timing_of = [&](LayerKind kind) -> const KindTiming& {
    for (const KindTiming& k : kinds) {
      if (k.kind == kind) return k;
    }
    STEPCAST_ASSERT(kinds.size() < most_kinds, "more kinds of block than compute reserved for");
    OperatorContext kind_ctx = ctx;
    kind_ctx.kind = kind;
    KindTiming k{kind, layer_operators(shape, kind_ctx), {}, {}};
    k.streams = time_part(k.ops, gpu, plan.precision, out.params, ex ? &k.times : no_times);
    kinds.push_back(std::move(k));
    return kinds.back();
  };
  const PartStreams embedding =
      time_part(embedding_ops, gpu, plan.precision, out.params, ex ? &embedding_times : no_times);
  const PartStreams head = time_part(head_ops, gpu, plan.precision, out.params, ex ? &head_times : no_times);
  // The optimizer's kernels are all "forward" operators: one stream, once per step.
  out.optimizer =
      time_part(optimizer_ops, gpu, plan.precision, out.params, ex ? &optimizer_times : no_times).forward.makespan;

  // Each stage runs its model chunks per micro-batch, each chunk the layers the plan's layer map
  // gives it (layers / pp / vp, or an uneven split or written layout): the first chunk of the
  // model also the embedding, the last the output layer and loss (and the MTP modules after it,
  // each one more block and the shared output layer again).
  const plan::LayerMap map = plan::layer_map(plan, shape.layers, shape.mtp_layers);
  const LayerKind mtp_kind{shape.moe.has_value(), false, workload::Block::kTransformer, bf16.mtp};

  add_attention_times(out, timing_of(attention_kind(shape)).ops, gpu, plan.precision);
  Seconds longest(-1.0);
  for (int s = 0; s < plan.pp; ++s) {
    StageCompute st;
    for (int c = 0; c < map.vp; ++c) {
      const plan::ChunkContent& held = map.at(s, c);
      auto chunk_kinds = layer_kinds(shape, map.first_decoder(s, c), held.decoders, bf16);
      if (held.mtp > 0) chunk_kinds.push_back({mtp_kind, held.mtp});
      add_chunk(st, time_chunk(held, chunk_kinds, embedding, head, timing_of), held.decoders);
    }
    if (st.forward + st.backward > longest) {
      longest = st.forward + st.backward;
      out.critical_stage = s;
    }
    out.stages.push_back(std::move(st));
  }
  if (plan.offload_layers > 0) longest = add_offload_waits(out, shape, plan, map, options, timing_of);
  out.time = longest * m;
  out.achieved_fraction = (out.flops.hardware / plan.gpus() / out.time) / out.peak;
  out.achieved = out.peak * out.achieved_fraction;

  if (ex) {
    const auto add = [&](const std::vector<Operator>& ops, const std::vector<KernelTime>& times, double per_step) {
      for (std::size_t i = 0; i < ops.size(); ++i) out.kernels.push_back({ops[i], times[i], per_step});
    };
    if (out.critical_stage == 0) add(embedding_ops, embedding_times, m);
    for (const auto& [kind, count] : stage_layer_kinds(shape, map, out.critical_stage, bf16)) {
      const KindTiming& k = timing_of(kind);
      add(k.ops, k.times, count * m);
    }
    if (out.critical_stage == plan.pp - 1) add(head_ops, head_times, m);
    add(optimizer_ops, optimizer_times, 1.0);
    explain_compute(out, workload, plan, gpu, options);
  }
  return out;
}

}  // namespace stepcast::cost
