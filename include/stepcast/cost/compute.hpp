// Compute per training step: FLOPs from the transformer's shape (Narayanan et al. 2021) and the
// time of every kernel of the operator list (operators.hpp) on the GPU's roofline
// (kernel_model.hpp), per pipeline stage and micro-batch, with the host's launch pace.
#pragma once

#include <optional>
#include <vector>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/activation_offload.hpp"
#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::cost {

/// Narayanan et al. 2021, eq. (3), FLOPs of one iteration of a GPT model (batch B sequences of
/// s tokens): 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)) with full recompute. Without recompute
/// the transformer part takes 3 passes instead of 4 and the logits keep their 6BshV:
/// 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h)).
Flops narayanan_step_flops(const workload::TransformerShape& shape, double batch_sequences, int seq_len,
                           bool full_recompute);

/// Forward-pass equivalents of one micro-batch through the transformer layers: forward 1 and
/// backward 2, and with full recompute the forward once more (4).
double passes_of_transformer(plan::Recompute recompute);

/// FLOPs of one training step of the whole model.
struct StepFlops {
  Flops model;     ///< forward + backward (3 passes), as MFU counts them (Chowdhery et al. 2022)
  Flops hardware;  ///< plus the forward work that recompute repeats
};

/// The generalised count: per token and layer 2 x (matmul parameters) + 4*s*h for attention
/// scores and their product with V, so GQA and gated MLPs are counted by their real matrices;
/// the output layer 2hV per token. Equals narayanan_step_flops for a GPT shape. Selective
/// recompute repeats the attention-score forward (4*s*h per token and layer), full recompute
/// the whole transformer forward. This is the convention MFU is reported in; the operator list
/// counts what the kernels execute (causal attention computes half the scores).
StepFlops step_flops(const workload::TransformerShape& shape, const plan::Plan& plan);

/// How the compute of a step is priced.
struct ComputeOptions {
  /// Replaces the operator model by hardware FLOPs / (peak x this fraction), spread evenly over
  /// the stages: the old single-constant model, kept as an explicit override.
  std::optional<double> achieved_fraction;
  /// Replaces the GPU's default kernel parameters (from `stepcast calibrate`).
  std::optional<KernelParams> kernel_params;
  /// Fill the kernel table and the explanation.
  bool explain = true;
  /// Each GPU's link to host memory, each way: what offload-layers= copies over (required then).
  std::optional<BytesPerSecond> host_bandwidth;
};

/// One micro-batch through one model chunk of a stage (plan::LayerMap says what it holds).
struct ChunkCompute {
  Seconds forward;      ///< its embedding, layers, MTP modules, output layer and loss
  Seconds backward;     ///< recompute, data and weight gradients
  Seconds weight_grad;  ///< the weight-gradient kernels inside `backward` (ZB-H1 splits them off)
  int layers = 0;       ///< transformer layers and MTP modules
  double moe_blocks = 0.0;
  double attention_blocks = 0.0;  ///< its layers that hold attention (all but a hybrid's others)
  double mamba_blocks = 0.0;      ///< a hybrid's Mamba-2 layers
};

/// One micro-batch on one pipeline stage: the sums over its model chunks.
struct StageCompute {
  Seconds forward;      ///< embedding (first stage), layers, output layer and loss (last stage)
  Seconds backward;     ///< recompute, data and weight gradients
  Seconds weight_grad;  ///< the weight-gradient kernels inside `backward` (ZB-H1 splits them off)
  double layers = 0.0;
  double moe_blocks = 0.0;           ///< MoE blocks of the stage, all chunks (the MTP modules on the last)
  std::vector<ChunkCompute> chunks;  ///< in the stage's chunk order (one without interleaving)
};

/// One operator with its time, as the kernel table shows it.
struct KernelRow {
  Operator op;
  KernelTime time;
  double per_step = 0.0;  ///< runs per step on the critical stage's GPU (layers x micro-batches)
};

struct ComputeEstimate {
  StepFlops flops;
  FlopsPerSecond peak;               ///< per GPU, in the plan's precision
  bool operator_model = true;        ///< false when an achieved fraction was given
  KernelParams params;               ///< the kernel parameters used (operator model only)
  std::vector<StageCompute> stages;  ///< one per pipeline stage
  int critical_stage = 0;            ///< the stage with the longest forward + backward
  /// Bubble-free compute of the critical stage's GPU: micro-batches x (forward + backward).
  Seconds time;
  Seconds optimizer;  ///< the optimizer step of one GPU
  /// The fused attention kernels of one layer and micro-batch (forward; backward), which the
  /// context-parallel ring overlaps its transfers with; zero without the operator model.
  Seconds attention_forward;
  Seconds attention_backward;
  /// Hardware FLOPs of one GPU over its compute time, as a fraction of the peak (given, with
  /// an achieved fraction; derived, with the operator model).
  double achieved_fraction = 0.0;
  FlopsPerSecond achieved;         ///< peak x achieved_fraction
  std::vector<KernelRow> kernels;  ///< the critical stage's operators (explain only)
  /// offload-layers=: the copies' waits, inside the stage's forward and backward.
  std::optional<OffloadWaits> offload;
  Explanation explanation;
};

/// Compute time of one step on `gpu`. Preconditions: resolved, valid plan; workload with a
/// shape; the GPU has a peak for the plan's precision. InputError when the operator model needs
/// a GPU figure the topology does not give (the SM count) or holds no kernel figures for it.
ComputeEstimate estimate_compute(const workload::Workload& workload, const plan::Plan& plan,
                                 const topology::GpuSpec& gpu, const ComputeOptions& options = {});

/// Parameters one GPU updates in the optimizer step (after tensor/pipeline split and ZeRO/FSDP
/// sharding of the optimizer state).
double optimizer_parameters_per_gpu(const workload::Workload& workload, const plan::Plan& plan);

/// The kernels of one GPU's optimizer step: the update of its parameters (optimizer_operators)
/// and, under optimizer=muon, the Newton-Schulz GEMMs (newton_schulz_operators).
std::vector<Operator> step_optimizer_operators(const workload::Workload& workload, const plan::Plan& plan,
                                               bool fp8_any_layout);

}  // namespace stepcast::cost
