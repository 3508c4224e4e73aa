// Compute per training step: FLOPs from the transformer's shape (Narayanan et al. 2021) and the
// time they take at an achieved rate (peak x a documented achieved fraction per GPU/precision).
#pragma once

#include <optional>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::cost {

/// Narayanan et al. 2021, eq. (3), FLOPs of one iteration of a GPT model (batch B sequences of
/// s tokens): 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)) with full recompute. Without recompute
/// the transformer part takes 3 passes instead of 4 and the logits keep their 6BshV:
/// 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h)).
Flops narayanan_step_flops(const workload::TransformerShape& shape, double batch_sequences, int seq_len, bool full_recompute);

/// FLOPs of one training step of the whole model.
struct StepFlops {
  Flops model;     ///< forward + backward (3 passes), as MFU counts them (Chowdhery et al. 2022)
  Flops hardware;  ///< plus the forward work that recompute repeats
};

/// The generalised count: per token and layer 2 x (matmul parameters) + 4*s*h for attention
/// scores and their product with V, so GQA and gated MLPs are counted by their real matrices;
/// the output layer 2hV per token. Equals narayanan_step_flops for a GPT shape. Selective
/// recompute repeats the attention-score forward (4*s*h per token and layer), full recompute
/// the whole transformer forward.
StepFlops step_flops(const workload::TransformerShape& shape, const plan::Plan& plan);

/// The datasheet peak of the GPU in the plan's precision (tensor-core rates; fp32 without).
FlopsPerSecond peak_rate(const topology::GpuSpec& gpu, plan::Precision precision);

/// The default achieved fraction of peak for a GPU and precision; sources in compute.cpp.
/// Calibration replaces it with a fitted figure.
double default_achieved_fraction(const topology::GpuSpec& gpu, plan::Precision precision);

struct ComputeEstimate {
  StepFlops flops;
  FlopsPerSecond peak;       ///< per GPU
  double achieved_fraction = 0.0;
  FlopsPerSecond achieved;   ///< peak x achieved_fraction
  Seconds time;              ///< hardware FLOPs / GPUs / achieved rate: the bubble-free compute time
  Explanation explanation;
};

/// Compute time of one step on `gpu`; `achieved_fraction` overrides the default; `explain`
/// fills the explanation. Precondition: resolved plan, workload with a shape, peak > 0.
ComputeEstimate estimate_compute(const workload::Workload& workload, const plan::Plan& plan, const topology::GpuSpec& gpu,
                                 std::optional<double> achieved_fraction = std::nullopt, bool explain = true);

}  // namespace stepcast::cost
