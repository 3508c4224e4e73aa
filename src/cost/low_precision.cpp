// Low-precision GEMMs as Transformer Engine runs them (NVIDIA Transformer Engine user guide and
// its recipe API: DelayedScaling, Float8CurrentScaling, MXFP8BlockScaling, NVFP4BlockScaling;
// Open Compute Project, "OCP Microscaling Formats (MX) v1.0" for the block sizes and scales).
#include "stepcast/cost/low_precision.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/layer_map.hpp"

namespace stepcast::cost {

namespace {

/// MXFP8: one 8-bit power-of-two (E8M0) scale per block of 32 elements (OCP MX v1.0, section 5).
constexpr double kMxBlock = 32.0;
/// NVFP4: 4-bit E2M1 elements with one E4M3 scale per block of 16 (TE NVFP4BlockScaling; NVIDIA,
/// "Pretraining Large Language Models with NVFP4", 2025, section 2).
constexpr double kNvfp4Block = 16.0;
constexpr double kFp4ElementBytes = 0.5;
/// DelayedScaling's default amax_history_len (TE common recipe API) and the fp32 figures kept per
/// tensor beside it (scale and scale_inv); a GEMM quantizes three tensors.
constexpr double kAmaxHistory = 1024.0;
constexpr double kScaleFigures = 2.0;
constexpr double kTensorsPerGemm = 3.0;
constexpr double kFp32Bytes = 4.0;
/// A quantize kernel: absolute value and max for the amax, multiply by the scale and round, per element.
constexpr double kQuantizeFlopsPerElement = 4.0;

}  // namespace

bool is_low_precision(plan::Precision p) {
  return p == plan::Precision::kFp8 || p == plan::Precision::kMxfp8 || p == plan::Precision::kNvfp4;
}

double quantized_bytes_per_element(plan::Precision p) {
  switch (p) {
    case plan::Precision::kFp8:
      return 1.0;
    case plan::Precision::kMxfp8:
      return 1.0 + 1.0 / kMxBlock;
    case plan::Precision::kNvfp4:
      return kFp4ElementBytes + 1.0 / kNvfp4Block;
    default:
      break;
  }
  STEPCAST_UNREACHABLE("quantized_bytes_per_element needs a low-precision format");
}

bool fp8_gemm_any_layout(const topology::GpuSpec& gpu) {
  const int cc = gpu.compute_capability;
  return (cc >= 100 && cc < 120) || cc >= 130;
}

double quantized_copies(plan::Precision precision, bool fp8_any_layout) {
  return precision == plan::Precision::kFp8 && fp8_any_layout ? 1.0 : 2.0;
}

QuantizeCost quantize_cost(double elements, double input_bytes, plan::Precision precision, plan::Fp8Recipe recipe,
                           bool fp8_any_layout, QuantizedTensor tensor) {
  // Reads of the 16-bit tensor and kernels launched: one cast, unless the format scales the
  // whole tensor by its amax (read first) and, for current scaling, turns it into the scale in a
  // kernel of its own; NVFP4's Linear operand is cast row-wise and Hadamard-transformed
  // column-wise, each reading it.
  double reads = 1.0;
  double kernels = 1.0;
  if (precision == plan::Precision::kFp8 && recipe == plan::Fp8Recipe::kCurrent) {
    reads = 2.0;
    kernels = 3.0;
  } else if (precision == plan::Precision::kNvfp4) {
    reads = tensor == QuantizedTensor::kOperand ? 3.0 : 2.0;
    kernels = reads;
  }
  QuantizeCost c;
  c.bytes = elements * (reads * input_bytes +
                        quantized_copies(precision, fp8_any_layout) * quantized_bytes_per_element(precision));
  c.flops = kQuantizeFlopsPerElement * elements;
  c.kernels = kernels;
  return c;
}

double scale_swizzle_kernels(plan::Precision precision) {
  return precision == plan::Precision::kMxfp8 || precision == plan::Precision::kNvfp4 ? 2.0 : 0.0;
}

double quantized_weight_count(const workload::TransformerShape& shape) {
  const double h = shape.hidden;
  const double kv_width = static_cast<double>(shape.kv_heads) * shape.head_dim();
  const double f = shape.ffn_hidden;
  const double up = (shape.gated_mlp ? 2.0 : 1.0) * f;
  return h * (h + 2.0 * kv_width) + h * h + h * up + f * h;
}

double scaling_state_bytes_per_gemm(plan::Precision precision, plan::Fp8Recipe recipe) {
  if (precision != plan::Precision::kFp8) return 0.0;
  const double per_tensor = recipe == plan::Fp8Recipe::kDelayed ? kAmaxHistory + kScaleFigures : 1.0 + kScaleFigures;
  return kTensorsPerGemm * per_tensor * kFp32Bytes;
}

namespace {

/// The layers of the first pipeline stage the plan keeps in bf16 (bf16-first-layers=,
/// bf16-last-layers=): they run unquantized and hold no copies.
double kept_layers_of_first_stage(const workload::TransformerShape& shape, const plan::Plan& plan) {
  const Bf16Layers bf16 = bf16_layers(plan);
  if (!bf16.any_layer()) return 0.0;
  const plan::LayerMap map = plan::layer_map(plan, shape.layers, shape.mtp_layers);
  double kept = 0.0;
  for (const auto& [kind, count] : stage_layer_kinds(shape, map, 0, bf16)) kept += kind.bf16 ? count : 0;
  return kept;
}

}  // namespace

Bytes quantized_copy_bytes(const workload::TransformerShape& shape, const plan::Plan& plan, int fsdp_prefetch_units,
                           bool fp8_any_layout) {
  if (!is_low_precision(plan.precision)) return Bytes(0.0);
  // Under FSDP/ZeRO-3 the 16-bit block is gathered, then quantized: only the gathered blocks have
  // copies (a kept layer's gather still counted as one). Otherwise the stage's quantized layers.
  const double blocks = plan.zero_stage() == 3
                            ? 1.0 + fsdp_prefetch_units
                            : static_cast<double>(shape.layers) / plan.pp - kept_layers_of_first_stage(shape, plan);
  constexpr double kGemmsPerLayer = 4.0;  // QKV, output projection, MLP up (and gate), MLP down
  const double weights = quantized_weight_count(shape) / plan.tp;
  const double copies =
      weights * quantized_copies(plan.precision, fp8_any_layout) * quantized_bytes_per_element(plan.precision);
  const double state = kGemmsPerLayer * scaling_state_bytes_per_gemm(plan.precision, plan.fp8_recipe);
  return Bytes(blocks * (copies + state));
}

double fp8_weight_share(const workload::Workload& workload, const plan::Plan& plan) {
  if (!plan.fp8_params || !workload.shape) return 0.0;
  const workload::TransformerShape& s = *workload.shape;
  const double embeddings = static_cast<double>(s.vocab) * s.hidden * (s.tied_embeddings ? 1.0 : 2.0);
  return std::max(0.0, 1.0 - embeddings / workload.parameters);
}

FlopsPerSecond gemm_peak(const topology::GpuSpec& gpu, plan::Precision precision, const Operator& op) {
  if (is_low_precision(precision) && !op.low_precision) return gpu.peak_bf16;
  return peak_rate(gpu, precision);
}

void check_precision_supported(const topology::GpuSpec& gpu, plan::Precision precision,
                               const std::string& topology_file) {
  if (peak_rate(gpu, precision).value() > 0.0) return;
  std::string why;
  switch (precision) {
    case plan::Precision::kMxfp8:
    case plan::Precision::kNvfp4:
      why = "block-scaled formats run on Blackwell tensor cores (B200, GB200 and later)";
      break;
    case plan::Precision::kFp8:
      why = "fp8 runs on Hopper tensor cores and later (H100, H200, B200, ...)";
      break;
    default:
      why = "the topology gives no peak for it";
      break;
  }
  throw InputError(
      topology_file, "/gpu/peak",
      fmt::format("the {} has no {} peak rate: precision={} needs a GPU whose gpu/peak gives \"{}\" ({})", gpu.name,
                  plan::to_string(precision), plan::to_string(precision), plan::to_string(precision), why));
}

}  // namespace stepcast::cost
