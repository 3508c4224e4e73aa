// Memory per GPU of a plan, every term separate: model state (parameters, gradients, optimizer
// state; ZeRO/FSDP sharding), activations (Korthikanti et al. 2022), buffers, overhead.
#pragma once

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/memory_margin.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::cost {

/// Settings of the memory model that are not part of the plan; defaults documented in memory.cpp.
struct MemoryOptions {
  /// CUDA context, cuBLAS/NCCL workspaces and allocator slack per GPU, settable by the user.
  Bytes framework_overhead = gib(1.0);
  /// FSDP units all-gathered ahead of the one being computed (PyTorch backward_prefetch/
  /// forward_prefetch keep one extra unit in flight).
  int fsdp_prefetch_units = 1;
  /// PyTorch DDP bucket_cap_mb default: 25 MiB.
  Bytes ddp_bucket = Bytes(25.0 * unit::kMebi);
  /// PyTorch DDP's gradient_as_bucket_view (default false): when false, the buckets hold a copy
  /// of every gradient, "equal to the total gradients size" (torch.nn.parallel.DDP docs).
  bool ddp_gradient_as_bucket_view = false;
  /// DeepSpeed's reduce_bucket_size and allgather_bucket_size default: 5e8 elements. zero=2 holds
  /// two such buckets; zero=1 (Megatron-Core's distributed optimizer) none, reducing in place. The
  /// step graph also sizes zero=2's gradient reduce-scatters by it (zero=1's are Megatron-Core's).
  double zero_bucket_elements = 5e8;
  /// Fill MemoryBreakdown::explanation; the planner turns it off in its inner loop.
  bool explain = true;
  /// Memory kept free below the GPU's capacity (--memory-margin): a plan within it does not fit.
  MemoryMargin margin;
  /// The GPU's FP8 GEMMs take any layout, so per-tensor fp8 weights keep one quantized copy
  /// (low_precision.hpp, fp8_gemm_any_layout); false without a GPU.
  bool fp8_any_layout = false;
};

/// Bytes per parameter of the model state before sharding (ZeRO paper, section 3.1: 2 + 2 + K).
struct StateBytesPerParameter {
  double parameters = 0.0;  ///< working copy used by forward/backward (2 in 16-bit)
  double gradients = 0.0;
  double optimizer = 0.0;  ///< K: fp32 master weights + optimizer moments (12 for mixed Adam)
};

/// 2+2+12 for mixed-precision Adam, 4+4+8 for fp32 Adam, and so on per precision and optimizer.
StateBytesPerParameter state_bytes_per_parameter(plan::Precision precision, plan::Optimizer optimizer);

/// The same for a plan: a mixed-precision plan that keeps data-parallel gradients in a buffer of
/// its own (DDP, ZeRO-1/2) and reduces them in fp32 (grad-reduce=fp32, Megatron's default) holds
/// that buffer in fp32, 4 bytes per parameter (Megatron-Core distributed_data_parallel.py:
/// grad_dtype = torch.float if ddp_config.grad_reduce_in_fp32 else param dtype; the main_grad
/// each parameter accumulates into). FSDP and ZeRO-3 plans keep their gradient dtype.
StateBytesPerParameter state_bytes_per_parameter(const plan::Plan& plan);

/// Model state held by one GPU, each part after tensor/pipeline split and ZeRO/FSDP sharding.
struct ModelState {
  Bytes parameters;
  Bytes gradients;
  Bytes optimizer_state;  ///< includes fp32 master weights under mixed precision
  [[nodiscard]] Bytes total() const { return parameters + gradients + optimizer_state; }
};

/// The model-state part alone: the seed's "8-way FSDP, fp16 params and grads, Adam:
/// 16 B/param / 8 = 14e9 B = 13.04 GiB per rank". Pipeline stages hold 1/pp of the parameters
/// and tensor-parallel ranks 1/tp (an even split; embeddings are spread with the layers).
/// Precondition: the plan is resolved.
ModelState model_state(const workload::Workload& workload, const plan::Plan& plan);

/// The peak memory of one GPU (the first pipeline stage, which holds the most activations).
struct MemoryBreakdown {
  Bytes parameters;
  Bytes gradients;
  Bytes optimizer_state;
  Bytes activations;        ///< zero for a bare parameter-count workload (no shape)
  Bytes temporary_buffers;  ///< all-gathered FSDP/ZeRO-3 units, DDP buckets
  /// Transient tensors at the peak: the layer being recomputed (its activations rebuilt for its
  /// backward) and, on the stage with the loss, the 16-bit logits beside the fp32 softmax and the
  /// output layer's weight-gradient placeholder.
  Bytes working_set;
  Bytes framework_overhead;
  /// fp8/mxfp8/nvfp4 plans: the quantized weight copies and scaling state (low_precision.hpp).
  Bytes quantized_copies;
  Bytes total;              ///< the sum of the eight terms above
  Explanation explanation;  ///< every term with its formula and inputs
  /// The pipeline stage the bytes are of: the one with the most (the first holds the most
  /// micro-batches, the last the loss). 0 without a pipeline.
  int stage = 0;

  [[nodiscard]] Bytes model_state() const { return parameters + gradients + optimizer_state; }
};

/// Parameters of one transformer block held by one tensor-parallel rank (an FSDP unit).
double layer_parameter_count_per_rank(const workload::TransformerShape& shape, const plan::Plan& plan);

/// Activation bytes of one transformer layer for one micro-batch on one GPU: what its forward
/// operators keep (operators.hpp), which is Korthikanti et al. 2022's Table 2 where its
/// assumptions hold, with tp, sequence parallel, recompute and flash attention as the plan says.
Bytes layer_activation_bytes(const workload::TransformerShape& shape, const plan::Plan& plan);

/// What a layer keeps on average over the model's layers, each kind of layer (cost::layer_kinds:
/// DeepSeek-V3's dense and MoE layers, a hybrid's Mamba-2, attention and MLP layers) weighed by
/// how many there are: the size of one layer's activation offload copy (offload-layers=, pp = 1).
Bytes mean_layer_activation_bytes(const workload::TransformerShape& shape, const plan::Plan& plan);

/// The activations recompute rebuilds for the one layer in its backward: the layer's tensors
/// without recompute minus those the plan keeps, of the kind of layer that rebuilds the most (a
/// stack of several kinds rebuilds one layer at a time). Zero without recompute.
Bytes recompute_working_set(const workload::TransformerShape& shape, const plan::Plan& plan);

/// Activation bytes held at the peak by the first pipeline stage: layers per stage x in-flight
/// micro-batches of the schedule x layer_activation_bytes, plus embedding and output layers.
Bytes activation_bytes(const workload::TransformerShape& shape, const plan::Plan& plan);

/// The pipeline stage (pp > 1) with the most bytes: its layers, the micro-batches it holds at its
/// peak, its activations (each kind of layer the layer map gives it), `model_state` (the even-split
/// state of one GPU) scaled by its share of the layers, and on the last stage the loss: the logits
/// it keeps (in `activations`) and what its backward has live beside them (`loss_working_set`:
/// the 16-bit logits, the output layer's weight-gradient placeholder). The first stage holds the
/// most micro-batches, the last the loss; an uneven split (pp-first-layers=, ...) may peak anywhere.
struct StageMemory {
  int stage = 0;
  double layers = 0.0;
  double held = 0.0;
  Bytes activations;
  Bytes model_state;
  Bytes loss_working_set;
};
StageMemory pipeline_peak_stage(const workload::TransformerShape& shape, const plan::Plan& plan, Bytes model_state);

/// The pipeline stage of an MoE plan (pp > 1) with the most bytes, from the blocks each stage
/// holds: its routed-expert state follows its MoE blocks (DeepSeek-V3's dense first layers sit on
/// stage 0, its MTP module on the last), the dense state its even share, its activations its own
/// blocks x the micro-batches it holds.
struct MoeStageMemory {
  int stage = 0;
  double moe_blocks = 0.0;  ///< MoE blocks (MTP modules included) on the stage
  double held = 0.0;
  Bytes activations;  ///< the last stage's with the logits the loss keeps
  ModelState model_state;
  Bytes loss_working_set;  ///< the last stage's: as StageMemory's
};
MoeStageMemory moe_peak_stage(const workload::Workload& workload, const plan::Plan& plan);

/// The full breakdown. Precondition: the plan is resolved (plan::resolve) and valid.
MemoryBreakdown estimate_memory(const workload::Workload& workload, const plan::Plan& plan,
                                const MemoryOptions& options = {});

/// Whether a breakdown fits a GPU's memory, and by how much.
struct MemoryFit {
  bool fits = false;
  Bytes capacity;
  Bytes headroom;               ///< capacity - total; negative when the plan exceeds the GPU
  Bytes margin;                 ///< kept free by --memory-margin: fits needs headroom >= margin
  bool default_margin = false;  ///< the margin is the commands' default, not --memory-margin
  /// The plan exceeds no byte of the GPU but eats into the margin.
  [[nodiscard]] bool within_margin() const { return !fits && headroom.value() >= 0.0; }
};
MemoryFit check_fit(const MemoryBreakdown& memory, Bytes gpu_memory, const MemoryMargin& margin = {});

/// What PyTorch's caching allocator holds of a breakdown, the figure torch.cuda.max_memory_allocated()
/// measures: the total less the framework overhead (the CUDA context and NCCL's buffers lie
/// outside the allocator, as does the slack it caches beyond its tensors).
Bytes allocated_bytes(const MemoryBreakdown& memory);

}  // namespace stepcast::cost
