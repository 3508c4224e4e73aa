// FLOPs per step (Narayanan et al. 2021, section 5.1 and Appendix) and compute time at an
// achieved fraction of the GPU's peak, with the default fractions and their sources.
#include "stepcast/cost/compute.hpp"

#include <fmt/format.h>

#include "stepcast/core/errors.hpp"

namespace stepcast::cost {

namespace {

/// Default achieved fractions of peak: the median hardware-FLOPs utilisation (HFU) of the
/// measured PyTorch FSDP runs in mosaicml/llm-foundry's benchmarking table
/// (../shared/data/training_runs_llm_foundry.csv, 216 runs, commit 4952183, 2024-04-22):
/// A100-40GB bf16 median 55.4% of 312 TFLOP/s (78 runs), A100-80GB 59.0% (59 runs), H100 bf16
/// 41.9% of 989 TFLOP/s (70 runs), H100 fp8 23.3% of 1979 TFLOP/s (7 runs). Those runs include
/// the communication they could not hide, so these figures are conservative for compute alone;
/// calibration replaces them. No source measures fp32/tf32 training here: the 16-bit fraction
/// of the tensor-core peak is used for them as well.
constexpr double kA100_40gbFraction = 0.554;
constexpr double kA100_80gbFraction = 0.590;
constexpr double kH100Bf16Fraction = 0.419;
constexpr double kH100Fp8Fraction = 0.233;

bool name_has(const topology::GpuSpec& gpu, std::string_view part) { return gpu.name.find(part) != std::string::npos; }

double passes_of_transformer(plan::Recompute recompute) {
  // Forward 1 + backward 2 (Narayanan et al. 2021, Appendix: backward is twice the forward);
  // full recompute runs the forward once more.
  return recompute == plan::Recompute::kFull ? 4.0 : 3.0;
}

}  // namespace

Flops narayanan_step_flops(const workload::TransformerShape& shape, double batch_sequences, int seq_len, bool full_recompute) {
  const double B = batch_sequences;
  const double s = seq_len;
  const double l = shape.layers;
  const double h = shape.hidden;
  const double V = shape.vocab;
  if (full_recompute) return Flops(96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h)));
  return Flops(72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h)));
}

StepFlops step_flops(const workload::TransformerShape& shape, const plan::Plan& plan) {
  const double h = shape.hidden;
  const double s = plan.seq_len;
  const double tokens = static_cast<double>(plan.global_batch) * s;
  const double kv = static_cast<double>(shape.kv_heads) * shape.head_dim();
  // Matmul parameters of one block: Q and O (h x h each), K and V (h x kv each), MLP.
  const double matmul = 2.0 * h * h + 2.0 * h * kv + (shape.gated_mlp ? 3.0 : 2.0) * h * shape.ffn_hidden;
  // A multiply-add is 2 FLOPs; QK^T and (scores)V are each 2*s*h per token.
  const double layer_forward = tokens * (2.0 * matmul + 4.0 * s * h);
  const double logits_forward = tokens * 2.0 * h * shape.vocab;
  const double layers = shape.layers;
  StepFlops out;
  out.model = Flops(3.0 * (layers * layer_forward + logits_forward));
  double hardware = passes_of_transformer(plan.recompute) * layers * layer_forward + 3.0 * logits_forward;
  if (plan.recompute == plan::Recompute::kSelective) hardware += layers * tokens * 4.0 * s * h;
  out.hardware = Flops(hardware);
  return out;
}

FlopsPerSecond peak_rate(const topology::GpuSpec& gpu, plan::Precision precision) {
  switch (precision) {
    case plan::Precision::kFp32: return gpu.peak_fp32;
    case plan::Precision::kTf32: return gpu.peak_tf32;
    case plan::Precision::kBf16: return gpu.peak_bf16;
    case plan::Precision::kFp16: return gpu.peak_fp16;
    case plan::Precision::kFp8: return gpu.peak_fp8;
  }
  STEPCAST_UNREACHABLE("unknown precision");
}

double default_achieved_fraction(const topology::GpuSpec& gpu, plan::Precision precision) {
  const bool hopper = name_has(gpu, "H100") || name_has(gpu, "H200") || name_has(gpu, "GH200");
  if (hopper) return precision == plan::Precision::kFp8 ? kH100Fp8Fraction : kH100Bf16Fraction;
  if (name_has(gpu, "80GB")) return kA100_80gbFraction;
  return kA100_40gbFraction;
}

ComputeEstimate estimate_compute(const workload::Workload& workload, const plan::Plan& plan, const topology::GpuSpec& gpu,
                                 std::optional<double> achieved_fraction, bool explain) {
  STEPCAST_ASSERT(workload.shape.has_value(), "estimate_compute needs a workload with a shape");
  ComputeEstimate out;
  out.flops = step_flops(*workload.shape, plan);
  out.peak = peak_rate(gpu, plan.precision);
  STEPCAST_ASSERT(out.peak.value() > 0.0, "estimate_compute needs a peak rate for the precision");
  out.achieved_fraction = achieved_fraction.value_or(default_achieved_fraction(gpu, plan.precision));
  out.achieved = out.peak * out.achieved_fraction;
  const double gpus = plan.gpus();
  out.time = (out.flops.hardware / gpus) / out.achieved;
  if (!explain) return out;
  const auto& s = *workload.shape;
  out.explanation.push_back({"model FLOPs", fmt::format("3 passes x (l={} x tokens x (2 x matmul params + 4sh) + tokens x 2hV), tokens = {} x {}",
                                                        s.layers, plan.global_batch, plan.seq_len),
                             format_flops(out.flops.model)});
  out.explanation.push_back({"hardware FLOPs", fmt::format("model FLOPs + recompute={}", plan::to_string(plan.recompute)),
                             format_flops(out.flops.hardware)});
  out.explanation.push_back({"achieved rate", fmt::format("{} peak ({}) x {:.3f} achieved fraction{}", gpu.name, format_flops_rate(out.peak),
                                                          out.achieved_fraction, achieved_fraction ? " (given)" : " (default, llm-foundry HFU median)"),
                             format_flops_rate(out.achieved)});
  out.explanation.push_back({"compute time", fmt::format("{} / {} GPUs / {}", format_flops(out.flops.hardware), plan.gpus(),
                                                         format_flops_rate(out.achieved)),
                             format_seconds(out.time)});
  return out;
}

}  // namespace stepcast::cost
