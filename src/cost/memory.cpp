// Memory per GPU: model state with ZeRO/FSDP sharding (Rajbhandari et al. 2020, section 3.1 and
// 5), activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", section 4 and Table 2), temporary buffers and framework overhead.
#include "stepcast/cost/memory.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/activation_offload.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/moe_memory.hpp"
#include "stepcast/cost/muon.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/cost/peft.hpp"
#include "stepcast/cost/pipeline.hpp"
#include "stepcast/cost/wgrad_placeholders.hpp"

namespace stepcast::cost {

namespace {

using plan::Precision;
using plan::Recompute;

bool is_mixed(Precision p) { return p == Precision::kBf16 || p == Precision::kFp16 || is_low_precision(p); }

}  // namespace

StateBytesPerParameter state_bytes_per_parameter(Precision precision, plan::Optimizer optimizer) {
  using plan::Optimizer;
  StateBytesPerParameter out;
  if (is_mixed(precision)) {
    // ZeRO paper section 3.1: 16-bit parameters and gradients (2 + 2) and K bytes of fp32
    // optimizer state, K = 12 for Adam (fp32 master copy, momentum, variance). fp8 training keeps
    // 16-bit weights and gradients (Transformer Engine casts to fp8 inside the GEMMs).
    out.parameters = 2.0;
    out.gradients = 2.0;
    switch (optimizer) {
      case Optimizer::kAdam:
      case Optimizer::kAdamW:
        out.optimizer = 12.0;
        break;  // master + m + v
      case Optimizer::kSgdMomentum:
      case Optimizer::kMuon:
        out.optimizer = 8.0;
        break;  // master + momentum (Muon's Adam share: muon.hpp)
      case Optimizer::kSgd:
        out.optimizer = 4.0;
        break;  // master only
    }
  } else {
    // fp32 training: no separate master copy; Adam keeps m and v in fp32.
    out.parameters = 4.0;
    out.gradients = 4.0;
    switch (optimizer) {
      case Optimizer::kAdam:
      case Optimizer::kAdamW:
        out.optimizer = 8.0;
        break;
      case Optimizer::kSgdMomentum:
      case Optimizer::kMuon:
        out.optimizer = 4.0;
        break;
      case Optimizer::kSgd:
        out.optimizer = 0.0;
        break;
    }
  }
  return out;
}

StateBytesPerParameter state_bytes_per_parameter(const plan::Plan& plan) {
  StateBytesPerParameter out = state_bytes_per_parameter(plan.precision, plan.optimizer);
  constexpr double kFp32GradientBytes = 4.0;
  if (is_mixed(plan.precision) && plan.grad_reduce == Precision::kFp32 && plan.zero_stage() <= 2 && !plan.is_fsdp())
    out.gradients = kFp32GradientBytes;
  return out;
}

ModelState model_state(const workload::Workload& workload, const plan::Plan& plan) {
  STEPCAST_ASSERT(plan.dp >= 1, "model_state needs a resolved plan");
  // Routed experts split and shard their own way (moe_memory.cpp).
  if (workload.shape && workload.shape->moe) return moe_model_state(workload, plan);
  const StateBytesPerParameter per =
      with_muon_adam_share(state_bytes_per_parameter(plan), plan, muon_adam_share(workload, workload.parameters));
  const ParameterShare share = parameters_per_model_rank(workload, plan);
  const double params = share.trained;
  const double shards = plan.state_shards();
  const int stage = plan.zero_stage();
  // ZeRO: stage 1 shards the optimizer state, stage 2 also the gradients, stage 3 also the
  // parameters (Rajbhandari et al. 2020, Figure 1); FSDP strategies map to stages in plan.hpp.
  // Frozen weights (peft=lora) are kept whole in the working precision, with no gradient or state.
  ModelState out;
  out.parameters = Bytes(params * per.parameters / (stage >= 3 ? shards : 1.0) + share.frozen * per.parameters);
  out.gradients = Bytes(params * per.gradients / (stage >= 2 ? shards : 1.0));
  out.optimizer_state = Bytes(params * per.optimizer / (stage >= 1 ? shards : 1.0));
  return out;
}

namespace {

/// The tokens of one micro-batch on a rank: s/cp x b.
double rank_tokens(const plan::Plan& plan) {
  return static_cast<double>(plan.seq_len) / plan.cp * plan.micro_batch_size;
}

Bytes kind_activation_bytes(const workload::TransformerShape& shape, const plan::Plan& plan, LayerKind kind) {
  // The tensors the layer's forward operators keep (operators.cpp, which follows Korthikanti
  // et al. 2022, section 4.1 and Table 2, operator by operator).
  OperatorContext ctx = operator_context(plan);
  ctx.kind = kind;
  return saved_activation_bytes(layer_operators(shape, ctx), shape, ctx);
}

/// Each kind of layer's activations, priced once (a stage holds a few kinds, many times over).
class KindBytes {
 public:
  KindBytes(const workload::TransformerShape& shape, const plan::Plan& plan) : shape_(shape), plan_(plan) {}
  Bytes operator()(const LayerKind& kind) {
    for (const auto& [known, bytes] : priced_) {
      if (known == kind) return bytes;
    }
    priced_.emplace_back(kind, kind_activation_bytes(shape_, plan_, kind));
    return priced_.back().second;
  }

 private:
  const workload::TransformerShape& shape_;
  const plan::Plan& plan_;
  std::vector<std::pair<LayerKind, Bytes>> priced_;
};

}  // namespace

Bytes layer_activation_bytes(const workload::TransformerShape& shape, const plan::Plan& plan) {
  // The model's first kind of block (the only kind of a dense model without windows).
  return kind_activation_bytes(shape, plan, layer_kinds(shape, 0, 1).front().first);
}

Bytes mean_layer_activation_bytes(const workload::TransformerShape& shape, const plan::Plan& plan) {
  Bytes total(0.0);
  for (const auto& [kind, count] : layer_kinds(shape, 0, shape.layers, bf16_layers(plan))) {
    total += kind_activation_bytes(shape, plan, kind) * static_cast<double>(count);
  }
  return total / static_cast<double>(shape.layers);
}

Bytes recompute_working_set(const workload::TransformerShape& shape, const plan::Plan& plan) {
  if (plan.recompute == Recompute::kNone) return Bytes(0.0);
  plan::Plan kept = plan;
  kept.recompute = Recompute::kNone;
  // Layers are rebuilt one at a time: the peak is the kind that rebuilds the most.
  Bytes most(0.0);
  for (const auto& [kind, count] : layer_kinds(shape, 0, shape.layers, bf16_layers(plan))) {
    most = std::max(most, kind_activation_bytes(shape, kept, kind) - kind_activation_bytes(shape, plan, kind));
  }
  return most;
}

namespace {

/// What the loss keeps of the output layer's logits for its backward: the fp32 softmax 4sbV/t
/// (Korthikanti section 4.3) or a fused loss's 16-bit logits, split over the vocabulary-parallel
/// ranks and the context-parallel ranks' s/cp tokens.
Bytes loss_saved_bytes(const workload::TransformerShape& shape, const plan::Plan& plan) {
  return Bytes(loss_saved_per_logit(operator_context(plan)) * rank_tokens(plan) * shape.vocab / plan.tp);
}

/// What the stage that holds the loss has live beside it as its backward starts.
Bytes loss_working_bytes(const workload::TransformerShape& shape, const plan::Plan& plan) {
  // The cross-entropy's 16-bit logits (and later their gradient) beside what it keeps
  // (Megatron-LM cross_entropy.py casts the logits to fp32 and works in place on the copy);
  // PyTorch's eager loss also holds autocast's fp32 copy while log_softmax writes its output.
  const double e = operator_context(plan).activation_bytes;
  const double held = plan.loss == plan::LossKernel::kEager ? e + 4.0 : e;
  return Bytes(rank_tokens(plan) * shape.vocab / plan.tp * held) + output_wgrad_placeholder(shape, plan);
}

}  // namespace

Bytes activation_bytes(const workload::TransformerShape& shape, const plan::Plan& plan) {
  const double held = held_microbatches(plan);
  Bytes total(0.0);
  // Each kind of block the first stage holds (dense or MoE, full or sliding-window attention).
  const plan::LayerMap map = plan::layer_map(plan, shape.layers, shape.mtp_layers);
  for (const auto& [kind, count] : stage_layer_kinds(shape, map, 0, bf16_layers(plan))) {
    total += kind_activation_bytes(shape, plan, kind) * (count * held);
  }
  // offload-layers= (pp = 1): the layers kept and the last offloaded one, whose copy ends with the
  // forward (activation_offload.hpp), of the stage's layers' mean bytes.
  total = total * (static_cast<double>(offload_resident_layers(shape.layers, plan.offload_layers)) / shape.layers);
  if (plan.pp == 1) total += loss_saved_bytes(shape, plan);  // the first stage is also the last
  return total;
}

namespace {

/// Micro-batches pipeline stage k holds at its peak: stage k of 1F1B min(p - k, m) (Narayanan et
/// al. 2021, section 2.2.1), GPipe all m; the interleaved schedule's stage 0 held_microbatches'
/// count and stage k that scaled by the same ramp (an assumption past stage 0); and the chunk the
/// EP all-to-all overlap runs ahead on every stage.
double held_at_stage(const plan::Plan& plan, int k) {
  const int m = plan.micro_batches();
  if (plan.schedule == plan::Schedule::kGpipe) return m;
  return held_microbatches(plan.schedule, plan.pp, m, plan.vp) * std::min(plan.pp - k, m) / std::min(plan.pp, m) +
         overlap_extra_microbatches(plan);
}

}  // namespace

StageMemory pipeline_peak_stage(const workload::TransformerShape& shape, const plan::Plan& plan, Bytes model_state) {
  // Each stage's model state follows its share of the layers. The stage with the most bytes is
  // the GPU that must fit. An even split's middle stages hold fewer micro-batches than the first
  // and no loss: only its ends can peak.
  const std::vector<int> split = plan::stage_layers(plan, shape.layers);
  const plan::LayerMap map = plan::layer_map(plan, shape.layers, shape.mtp_layers);
  KindBytes kind_bytes(shape, plan);
  const int last = plan.pp - 1;
  const int step = plan.uneven_pipeline() ? 1 : std::max(1, last);
  StageMemory peak;
  for (int k = 0; k <= last; k += step) {
    const double held = held_at_stage(plan, k);
    const double layers = split[static_cast<std::size_t>(k)];
    Bytes micro_batch(0.0);
    for (const auto& [kind, count] : stage_layer_kinds(shape, map, k, bf16_layers(plan))) {
      micro_batch += kind_bytes(kind) * static_cast<double>(count);
    }
    StageMemory st{k, layers, held, micro_batch * held, model_state * (layers * plan.pp / shape.layers), Bytes(0.0)};
    if (k == last) {
      st.activations += loss_saved_bytes(shape, plan);
      st.loss_working_set = loss_working_bytes(shape, plan);
    }
    const auto bytes = [](const StageMemory& x) { return x.activations + x.model_state + x.loss_working_set; };
    if (k == 0 || bytes(st) > bytes(peak)) peak = st;
  }
  return peak;
}

MoeStageMemory moe_peak_stage(const workload::Workload& workload, const plan::Plan& plan) {
  STEPCAST_ASSERT(workload.shape && workload.shape->moe, "moe_peak_stage needs an MoE workload");
  const workload::TransformerShape& shape = *workload.shape;
  const MoeModelState even = moe_state_split(workload, plan);
  const plan::LayerMap map = plan::layer_map(plan, shape.layers, shape.mtp_layers);
  const double moe_blocks = shape.moe_weight_blocks();
  KindBytes kind_bytes(shape, plan);
  MoeStageMemory peak;
  for (int k = 0; k < plan.pp; ++k) {
    MoeStageMemory st{k,
                      k == plan.pp - 1 ? static_cast<double>(shape.mtp_weight_modules()) : 0.0,
                      held_at_stage(plan, k),
                      Bytes(0.0),
                      {},
                      Bytes(0.0)};
    for (const auto& [kind, count] : stage_layer_kinds(shape, map, k, bf16_layers(plan))) {
      if (kind.moe) st.moe_blocks += count;
      st.activations += kind_bytes(kind) * (count * st.held);
    }
    if (k == plan.pp - 1) {
      st.activations += loss_saved_bytes(shape, plan);
      st.loss_working_set = loss_working_bytes(shape, plan);
    }
    // The experts' state is the even split's times this stage's MoE blocks over the average.
    const double expert_share = st.moe_blocks * plan.pp / moe_blocks;
    st.model_state = ModelState{even.dense.parameters + even.experts.parameters * expert_share,
                                even.dense.gradients + even.experts.gradients * expert_share,
                                even.dense.optimizer_state + even.experts.optimizer_state * expert_share};
    const auto bytes = [](const MoeStageMemory& x) {
      return x.activations + x.model_state.total() + x.loss_working_set;
    };
    if (k == 0 || bytes(st) > bytes(peak)) peak = st;
  }
  return peak;
}

namespace {

/// Which buffer rule applied, so the explanation can name it.
enum class BufferKind {
  kNone,
  kGatheredUnits,
  kGatheredUnitsFp8Params,
  kGradOpUnit,
  kZeroBuckets,
  kDistributedOptimizerInPlace,
  kDdpBucketView,
  kDdpBucketCopy,
  kMegatronDdpInPlace
};

std::string sharded_note(const plan::Plan& plan, int from_stage) {
  return plan.zero_stage() >= from_stage && plan.state_shards() > 1 ? fmt::format(" / {} shards", plan.state_shards())
                                                                    : std::string();
}

/// The activation rows: the peak stage (an MoE pipeline's, an uneven split's), context
/// parallel's split, and the per-layer bytes times layers and micro-batches held.
void explain_activations(Explanation& ex, const workload::Workload& workload, const plan::Plan& plan, Bytes activations,
                         bool holds_loss) {
  if (const auto& shape = workload.shape) {
    double held = held_microbatches(plan);
    double stage_layers = static_cast<double>(offload_resident_layers(shape->layers, plan.offload_layers)) / plan.pp;
    if (plan.offload_layers > 0) {
      ex.push_back({"activation offload",
                    fmt::format("{} of {} layers' activations go to the host in the forward; held at the peak: the "
                                "{} kept and the last offloaded one, whose copy ends with the forward (Transformer "
                                "Engine's cpu_offload, as Megatron-Core's cpu_offloading runs it)",
                                plan.offload_layers, shape->layers, shape->layers - plan.offload_layers),
                    fmt::format("{} layers", stage_layers)});
    }
    if (shape->moe && plan.pp > 1) {
      const MoeStageMemory peak = moe_peak_stage(workload, plan);
      const double blocks = shape->moe_weight_blocks();
      held = peak.held;
      ex.push_back(
          {"peak stage",
           fmt::format("stage {} has the most bytes: {:.4g} MoE blocks of {:.4g} on {} stages (its "
                       "routed-expert state x {:.4g} of the even split's) and {:.4g} micro-batches held",
                       peak.stage, peak.moe_blocks, blocks, plan.pp, peak.moe_blocks * plan.pp / blocks, peak.held),
           fmt::format("stage {}", peak.stage)});
    } else if (plan.pp > 1) {
      const StageMemory peak = pipeline_peak_stage(*shape, plan, model_state(workload, plan).total());
      held = peak.held;
      stage_layers = peak.layers;
      if (plan.uneven_pipeline()) {
        ex.push_back({"peak stage",
                      fmt::format("uneven split {}: stage {} has the most bytes (model state x its share of the "
                                  "layers + activations, the last stage's loss with them)",
                                  fmt::join(plan::stage_layers(plan, shape->layers), "/"), peak.stage),
                      fmt::format("stage {}", peak.stage)});
      } else if (peak.stage != 0) {
        ex.push_back({"peak stage",
                      fmt::format("stage {}, the last, has the most bytes: the loss's logits and working set "
                                  "outweigh the {:.4g} micro-batches the first stage holds to its {:.4g}",
                                  peak.stage, held_microbatches(plan), peak.held),
                      fmt::format("stage {}", peak.stage)});
      }
    }
    if (plan.cp > 1) {
      ex.push_back(
          {"context parallel",
           fmt::format("each rank keeps the activations of s/cp = {}/{} = {} tokens (Megatron-Core context parallel)",
                       plan.seq_len, plan.cp, plan.seq_len / plan.cp),
           fmt::format("/ {}", plan.cp)});
    }
    ex.push_back({"activations",
                  fmt::format("{} per layer{} (what its operators keep, Korthikanti 2022; s={}, b={}, t={}, "
                              "recompute={}, sp={}, flash={}) x {} layers/stage x {:.4g} "
                              "micro-batches held ({}){}",
                              format_bytes(mean_layer_activation_bytes(*shape, plan)),
                              one_layer_kind(*shape, bf16_layers(plan))
                                  ? ""
                                  : " on average over the model's kinds of layer (each stage holds its own)",
                              plan.seq_len, plan.micro_batch_size, plan.tp, plan::to_string(plan.recompute),
                              plan.sequence_parallel ? "on" : "off", plan.flash_attention ? "on" : "off", stage_layers,
                              held, plan::to_string(plan.schedule),
                              !holds_loss                             ? ""
                              : plan.loss == plan::LossKernel::kFused ? " + the fused loss's 16-bit logits 2sbV/t"
                                                                      : " + fp32 logits 4sbV/t"),
                  format_bytes(activations)});
  } else {
    ex.push_back(
        {"activations", "unknown: the workload gives a parameter count, not a shape", format_bytes(activations)});
  }
}

/// What the temporary-buffer rule that applied holds.
std::string buffer_rule(BufferKind buffers, const MemoryOptions& options, const StateBytesPerParameter& per) {
  switch (buffers) {
    case BufferKind::kNone:
      return "none for this sharding";
    case BufferKind::kGatheredUnits:
      return fmt::format("(1 current + {} prefetched) all-gathered blocks x {} B/param + one block's gradients",
                         options.fsdp_prefetch_units, per.parameters);
    case BufferKind::kGatheredUnitsFp8Params:
      return fmt::format(
          "(1 current + {} prefetched) all-gathered blocks' 16-bit parameters (their norms: fp8-params=on gathers "
          "the quantized weights in the low-precision copies) x {} B/param + one block's gradients",
          options.fsdp_prefetch_units, per.parameters);
    case BufferKind::kGradOpUnit:
      return "one block's unsharded gradients before its reduce-scatter";
    case BufferKind::kZeroBuckets:
      return fmt::format("DeepSpeed reduce + all-gather buckets of min({:.3g}, params/rank) elements",
                         options.zero_bucket_elements);
    case BufferKind::kDistributedOptimizerInPlace:
      return "none: Megatron-Core's distributed optimizer reduces and gathers in place in its gradient and parameter "
             "buffers";
    case BufferKind::kDdpBucketView:
      return fmt::format("one DDP bucket in flight ({}, gradient_as_bucket_view)", format_bytes(options.ddp_bucket));
    case BufferKind::kDdpBucketCopy:
      return "DDP buckets copy every gradient (gradient_as_bucket_view=false)";
    case BufferKind::kMegatronDdpInPlace:
      return "none: Megatron-Core's DDP (grad-reduce= stated, zero=0) reduces in place in its gradient buffer";
  }
  STEPCAST_UNREACHABLE("unknown buffer rule");
}

Explanation explain_memory(const workload::Workload& workload, const plan::Plan& plan, const MemoryOptions& options,
                           const MemoryBreakdown& m, BufferKind buffers, Bytes layer_placeholders) {
  // The loss sits on the last stage: a one-stage plan's, or a pipeline's where that stage peaks.
  const bool holds_loss = workload.shape && (plan.pp == 1 || m.stage == plan.pp - 1);
  const Bytes output_placeholder = workload.shape ? output_wgrad_placeholder(*workload.shape, plan) : Bytes(0.0);
  const StateBytesPerParameter per = state_bytes_per_parameter(plan);
  const int mp = plan.tp * plan.pp;
  // An uneven split: the peak stage's state is its share of the layers (pipeline_peak_stage).
  std::string share;
  if (plan.uneven_pipeline() && workload.shape) {
    const StageMemory peak = pipeline_peak_stage(*workload.shape, plan, model_state(workload, plan).total());
    share = fmt::format(" x {:.4g}/{:.4g} (stage {}'s layers over the even split's)", peak.layers,
                        static_cast<double>(workload.shape->layers) / plan.pp, peak.stage);
  }
  Explanation ex;
  // What trains: the model's share over tp*pp, or under peft=lora the adapters of one rank.
  const std::string trained =
      plan.peft == plan::Peft::kLora
          ? fmt::format("{:.6g} LoRA adapter params per rank", parameters_per_model_rank(workload, plan).trained)
          : fmt::format("{:.6g} params / {}", workload.parameters, mp);
  ex.push_back(
      {"parameters",
       fmt::format("{:.6g} params / (tp*pp = {}) x {} B{}{}{}", workload.parameters, mp, per.parameters,
                   plan.peft == plan::Peft::kLora ? " (frozen) + the adapters" : "", sharded_note(plan, 3), share),
       format_bytes(m.parameters)});
  ex.push_back({"gradients", fmt::format("{} x {} B{}{}", trained, per.gradients, sharded_note(plan, 2), share),
                format_bytes(m.gradients)});
  ex.push_back(
      {"optimizer state",
       fmt::format("{} x K = {} B ({}, {}; ZeRO 2+2+K){}{}", trained, per.optimizer, plan::to_string(plan.optimizer),
                   plan::to_string(plan.precision), sharded_note(plan, 1), share),
       format_bytes(m.optimizer_state)});
  explain_activations(ex, workload, plan, m.activations, holds_loss);
  std::string buffer_text = buffer_rule(buffers, options, per);
  if (layer_placeholders.value() > 0.0) {
    const std::string kept = fmt::format(
        "Transformer Engine's weight-gradient placeholders {}: one per distinct linear weight shape of the stage's "
        "layers, in the weights' precision (get_dummy_wgrad; Megatron-Core adds the gradients into main_grad)",
        format_bytes(layer_placeholders));
    buffer_text = buffers == BufferKind::kNone ? kept : buffer_text + "; + " + kept;
  }
  ex.push_back({"temporary buffers", buffer_text, format_bytes(m.temporary_buffers)});
  ex.push_back({"working set",
                fmt::format("the layer being recomputed (recompute={}{}){}{}", plan::to_string(plan.recompute),
                            !workload.shape || one_layer_kind(*workload.shape, bf16_layers(plan))
                                ? ""
                                : "; the kind of layer that rebuilds the most",
                            !holds_loss                             ? ""
                            : plan.loss == plan::LossKernel::kEager ? " + the loss's 16-bit logits and fp32 copy 6sbV/t"
                                                                    : " + the loss's 16-bit logits sbV/t",
                            holds_loss && output_placeholder.value() > 0.0
                                ? fmt::format(" + the output layer's weight-gradient placeholder V/t x h ({}), "
                                              "allocated as each backward starts",
                                              format_bytes(output_placeholder))
                                : std::string()),
                format_bytes(m.working_set)});
  ex.push_back({"framework overhead", "CUDA context, cuBLAS/NCCL workspaces, allocator slack (--overhead)",
                format_bytes(m.framework_overhead)});
  if (m.quantized_copies.value() > 0.0) {
    ex.push_back(
        {"low-precision copies",
         fmt::format("{} blocks x ({:.6g} linear weights / tp {} x 2 copies x {:.4g} B + 4 GEMMs x {:.6g} B scaling "
                     "state ({}{}))",
                     plan.zero_stage() == 3
                         ? fmt::format("{} gathered", 1 + options.fsdp_prefetch_units)
                         : fmt::format("{} stage", workload.shape ? workload.shape->layers / plan.pp : 0),
                     workload.shape ? quantized_weight_count(*workload.shape) : 0.0, plan.tp,
                     quantized_bytes_per_element(plan.precision),
                     scaling_state_bytes_per_gemm(plan.precision, plan.fp8_recipe), plan::to_string(plan.precision),
                     plan.precision == Precision::kFp8 ? fmt::format(", {} scaling", plan::to_string(plan.fp8_recipe))
                                                       : std::string()),
         format_bytes(m.quantized_copies)});
  }
  ex.push_back({"total", "sum of the terms above", format_bytes(m.total)});
  return ex;
}

/// An MoE plan's rows: the parameter, gradient and optimizer rows split into dense and expert
/// parts, each sharded its own way, the split itself first, and the dispatch buffers.
void explain_moe_split(Explanation& ex, const workload::Workload& workload, const plan::Plan& plan,
                       Bytes dispatch_buffers) {
  const StateBytesPerParameter per = state_bytes_per_parameter(plan.precision, plan.optimizer);
  const ExpertSplit split = expert_split(workload, plan);
  // The parameter, gradient and optimizer rows: dense and expert parts, each sharded its own way.
  const auto parts = [&](const char* what, double bytes, int from_stage) {
    const bool sharded = plan.zero_stage() >= from_stage;
    return fmt::format(
        "({:.6g} dense{} + {:.6g} expert{}) params/GPU x {} B ({})", split.dense_per_gpu,
        sharded && split.dense_shards > 1 ? fmt::format(" / {:.4g} shards", split.dense_shards) : std::string(),
        split.expert_per_gpu,
        sharded && split.expert_shards > 1 ? fmt::format(" / {:.4g} shards", split.expert_shards) : std::string(),
        bytes, what);
  };
  ex[0].formula = parts("working copy", per.parameters, 3);
  ex[1].formula = parts("gradients", per.gradients, 2);
  ex[2].formula = parts("optimizer state, ZeRO 2+2+K", per.optimizer, 1);
  ex.insert(ex.begin(),
            {"MoE parameter split",
             fmt::format("{:.6g} dense / (tp*pp = {}), shards {:.4g}; {:.6g} routed-expert / (etp*ep*pp = {}), "
                         "shards {:.4g} (edp = {})",
                         split.dense, plan.tp * plan.pp, split.dense_shards, split.routed,
                         plan.expert_tp() * plan.ep * plan.pp, split.expert_shards, plan.expert_dp()),
             fmt::format("{:.6g} params/GPU", split.dense_per_gpu + split.expert_per_gpu)});
  ex.insert(
      ex.end() - 1,
      {"MoE dispatch buffers (in temporary buffers)",
       fmt::format("send b*s/cp (/t under sp) x top-{} x h + received expert rows x h, x {} B (load factor {:.4g})",
                   workload.shape->moe->top_k, operator_context(plan).activation_bytes,
                   operator_context(plan).experts.load_factor),
       format_bytes(dispatch_buffers)});
}

}  // namespace

MemoryBreakdown estimate_memory(const workload::Workload& workload, const plan::Plan& plan,
                                const MemoryOptions& options) {
  STEPCAST_ASSERT(plan.dp >= 1 && plan.global_batch >= 1, "estimate_memory needs a resolved plan");
  const StateBytesPerParameter per = state_bytes_per_parameter(plan.precision, plan.optimizer);
  ModelState state = model_state(workload, plan);
  // fp8-params=on: the quantized GEMMs' weights are the fp8 copies counted below, with no 16-bit one.
  const double fp8_share = fp8_weight_share(workload, plan);
  state.parameters = state.parameters * (1.0 - fp8_share);
  MemoryBreakdown out;
  out.parameters = state.parameters;
  out.gradients = state.gradients;
  out.optimizer_state = state.optimizer_state;
  Bytes loss_working_set(0.0);  // on the stage that holds the loss, if it is the peak's
  if (workload.shape && workload.shape->moe && plan.pp > 1) {
    // An MoE pipeline: the stage with the most bytes, its expert state from its own MoE blocks.
    const MoeStageMemory peak = moe_peak_stage(workload, plan);
    out.activations = peak.activations;
    out.stage = peak.stage;
    loss_working_set = peak.loss_working_set;
    out.parameters = peak.model_state.parameters * (1.0 - fp8_share);
    out.gradients = peak.model_state.gradients;
    out.optimizer_state = peak.model_state.optimizer_state;
  } else if (workload.shape && plan.pp > 1) {
    // A pipeline: the stage with the most bytes (the first's micro-batches or the last's loss; an
    // uneven split's any), its state scaled by its share of the layers.
    const StageMemory peak = pipeline_peak_stage(*workload.shape, plan, state.total());
    const double share = peak.layers * plan.pp / workload.shape->layers;
    out.activations = peak.activations;
    out.stage = peak.stage;
    loss_working_set = peak.loss_working_set;
    out.parameters = state.parameters * share;
    out.gradients = state.gradients * share;
    out.optimizer_state = state.optimizer_state * share;
  } else if (workload.shape) {
    out.activations = activation_bytes(*workload.shape, plan);
    loss_working_set = loss_working_bytes(*workload.shape, plan);
  }

  // Temporary buffers: what the sharding strategy materialises beyond the sharded state.
  BufferKind buffers = BufferKind::kNone;
  const int stage = plan.zero_stage();
  if (stage == 3 || plan.sharding == plan::Sharding::kFsdpGradOp) {
    if (workload.shape) {
      // An MoE block gathers its dense part over dp and its routed experts over edp: the unit is
      // the largest block one GPU holds whole (moe_memory.cpp).
      const double unit = workload.shape->moe ? moe_shard_units(*workload.shape, plan).largest_block
                                              : layer_parameter_count_per_rank(*workload.shape, plan);
      if (stage == 3) {
        // FSDP/ZeRO-3 gather one unit (a transformer block) to compute it, plus the prefetched
        // ones, and hold its full gradient until the reduce-scatter (PyTorch FSDP notes).
        // fp8-params=on: a dense block's quantized weights are gathered in their format, which
        // the low-precision copies hold (quantized_copy_bytes); the 16-bit gather keeps the rest.
        const bool fp8_gather = fp8_share > 0.0 && !workload.shape->moe;
        const double sixteen_bit =
            fp8_gather ? std::max(0.0, unit - quantized_weight_count(*workload.shape) / plan.tp) : unit;
        out.temporary_buffers =
            Bytes(sixteen_bit * per.parameters * (1.0 + options.fsdp_prefetch_units) + unit * per.gradients);
        buffers = fp8_gather ? BufferKind::kGatheredUnitsFp8Params : BufferKind::kGatheredUnits;
      } else {
        out.temporary_buffers = Bytes(unit * per.gradients);
        buffers = BufferKind::kGradOpUnit;
      }
    }
  } else if (plan.sharding == plan::Sharding::kZero1) {
    // Megatron-Core's distributed optimizer (zero=1) reduce-scatters each gradient bucket in place in
    // its contiguous gradient buffer and gathers the updated parameters into its parameter buffer
    // (megatron/core/distributed/param_and_grad_buffer.py): both buffers are the state counted above.
    buffers = BufferKind::kDistributedOptimizerInPlace;
  } else if (plan.sharding == plan::Sharding::kZero2) {
    // DeepSpeed's reduce and all-gather buckets, each at most zero_bucket_elements elements.
    const double elements = std::min(options.zero_bucket_elements, parameters_per_model_rank(workload, plan).trained);
    out.temporary_buffers = Bytes(elements * (per.gradients + per.parameters));
    buffers = BufferKind::kZeroBuckets;
  } else if (plan.megatron_ddp()) {
    // zero=0 with grad-reduce=: Megatron-Core's DDP all-reduces each bucket in place in its contiguous gradient buffer
    // (megatron/core/distributed/param_and_grad_buffer.py): the gradients counted above.
    buffers = BufferKind::kMegatronDdpInPlace;
  } else if (plan.dp > 1) {
    if (options.ddp_gradient_as_bucket_view) {
      out.temporary_buffers = options.ddp_bucket;
      buffers = BufferKind::kDdpBucketView;
    } else {
      out.temporary_buffers = state.gradients;
      buffers = BufferKind::kDdpBucketCopy;
    }
  }
  Bytes dispatch_buffers(0.0);
  if (workload.shape && workload.shape->moe) {
    // An MoE block's all-to-all send and receive buffers, live while it runs (moe_memory.cpp).
    dispatch_buffers = moe_dispatch_buffers(*workload.shape, plan);
    out.temporary_buffers += dispatch_buffers;
  }
  Bytes layer_placeholders(0.0);
  if (const auto& shape = workload.shape) {
    layer_placeholders = layer_wgrad_placeholders(*shape, plan, out.stage);
    out.temporary_buffers += layer_placeholders;
    out.working_set = recompute_working_set(*shape, plan) + loss_working_set;
  }
  out.framework_overhead = options.framework_overhead;
  if (workload.shape)
    out.quantized_copies =
        quantized_copy_bytes(*workload.shape, plan, options.fsdp_prefetch_units, options.fp8_any_layout);
  out.total = out.parameters + out.gradients + out.optimizer_state + out.activations + out.temporary_buffers +
              out.working_set + out.framework_overhead + out.quantized_copies;
  if (options.explain) {
    out.explanation = explain_memory(workload, plan, options, out, buffers, layer_placeholders);
    if (workload.shape && workload.shape->moe) explain_moe_split(out.explanation, workload, plan, dispatch_buffers);
    if (fp8_share > 0.0) {
      for (auto& row : out.explanation) {
        if (row.label != "parameters") continue;
        row.formula += fmt::format(" x (1 - {:.4g}: the share of weights kept in {} alone, fp8-params=on)", fp8_share,
                                   plan::to_string(plan.precision));
      }
    }
  }
  return out;
}

Bytes allocated_bytes(const MemoryBreakdown& memory) { return memory.total - memory.framework_overhead; }

double layer_parameter_count_per_rank(const workload::TransformerShape& shape, const plan::Plan& plan) {
  return workload::layer_parameter_count(shape) / plan.tp;
}

MemoryFit check_fit(const MemoryBreakdown& memory, Bytes gpu_memory, const MemoryMargin& margin) {
  MemoryFit fit;
  fit.capacity = gpu_memory;
  fit.headroom = gpu_memory - memory.total;
  fit.margin = margin.of(gpu_memory);
  fit.default_margin = margin.is_default;
  fit.fits = fit.headroom.value() >= fit.margin.value();
  return fit;
}

}  // namespace stepcast::cost
