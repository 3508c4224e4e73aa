// Training in fp8, mxfp8 or nvfp4 as Transformer Engine runs it: the transformer layers' linear
// GEMMs (fprop, dgrad and wgrad) in the low-precision format, everything else in bf16; the
// quantize kernels that feed those GEMMs; the low-precision weight copies and scaling state.
#pragma once

#include <string>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::cost {

/// Whether the plan runs its layers' linear GEMMs in an 8- or 4-bit format (fp8, mxfp8, nvfp4).
bool is_low_precision(plan::Precision precision);

/// Bytes one quantized element takes, its share of the block scales included: fp8 1; mxfp8
/// 1 + 1/32 (an E8M0 scale per 32 elements); nvfp4 1/2 + 1/16 (an E4M3 scale per 16 elements).
double quantized_bytes_per_element(plan::Precision precision);

/// Whether the GPU's FP8 GEMMs take their operands in any layout, as Transformer Engine asks
/// (nvte_is_non_tn_fp8_gemm_supported: compute capability 10.x, 11.x and 13.0 on); Hopper's, and
/// a GPU of unknown capability's, read only the TN layout.
bool fp8_gemm_any_layout(const topology::GpuSpec& gpu);

/// Quantized copies Transformer Engine keeps of a tensor that GEMMs read both ways (the weight in
/// fprop and dgrad, the input in fprop and wgrad): a row-wise and a column-wise one for the
/// block-scaled formats, whose scales run along one axis, and for per-tensor fp8 where FP8 GEMMs
/// read only the TN layout; one per-tensor fp8 copy where they take any layout (TE's quantizer
/// then makes no transpose: create_transpose = columnwise && !nvte_is_non_tn_fp8_gemm_supported()).
double quantized_copies(plan::Precision precision, bool fp8_any_layout);

/// Which tensor a cast quantizes, which decides how many kernels NVFP4 takes (below): a Linear's
/// input or output gradient, the same of a GroupedLinear's experts (one call over all of them), or
/// a weight.
enum class QuantizedTensor { kOperand, kGroupedOperand, kWeight };

/// What one cast moves and runs: it reads `elements` of `input_bytes` each and writes the
/// quantized copies (quantized_copies). Current scaling reads the tensor once more for its amax
/// first and turns it into the scale in a one-thread kernel before the cast: three kernels
/// (Float8CurrentScalingQuantizer::quantize_impl: nvte_compute_amax_with_config,
/// nvte_compute_scale_from_amax, nvte_quantize_v2). NVFP4's second level of scaling is one FP32
/// scale per tensor, so its cast too reads the tensor for its amax first (TE NVFP4BlockScaling;
/// NVFP4Quantizer::quantize_impl in transformer_engine/pytorch/csrc/quantizer.cpp:
/// nvte_compute_amax_with_config, or nvte_hadamard_transform_amax where the column-wise copy is
/// Hadamard-transformed). The recipe's default random Hadamard transform of the weight-gradient
/// operands (NVTE_NVFP4_DISABLE_RHT unset) then casts a Linear's operand in two kernels, each
/// reading it (nvte_quantize_v2 row-wise, nvte_hadamard_transform_cast_fusion_columnwise), where
/// a GroupedLinear's split_quantize (transformer_engine/pytorch/csrc/extensions/cast.cpp) casts
/// both ways in one (nvte_group_hadamard_transform_cast_fusion; assumed: every expert's rows
/// aligned to its tiles) and a weight, 2D-scaled without the transform, in one.
struct QuantizeCost {
  double bytes = 0.0;
  double flops = 0.0;
  double kernels = 1.0;
};
QuantizeCost quantize_cost(double elements, double input_bytes, plan::Precision precision, plan::Fp8Recipe recipe,
                           bool fp8_any_layout, QuantizedTensor tensor);

/// Kernels Transformer Engine launches before a block-scaled GEMM (mxfp8, nvfp4) to rewrite its
/// two operands' scales from the compact order its quantizers write into the swizzled order the
/// tensor cores read: one nvte_swizzle_scaling_factors launch per operand of a Linear's GEMM, one
/// multi-tensor launch per operand over a GroupedLinear's experts (transformer_engine/pytorch/csrc/
/// extensions/swizzle.cpp; TE issue 2446, 2025-12: "disentangle scale swizzling from GEMM"). Per-
/// tensor fp8 has one scale per tensor and launches none. TE releases from 2026-08 write the
/// activations' scales swizzled at quantization (PR 3338), leaving the weights' two.
double scale_swizzle_kernels(plan::Precision precision);

/// Weights of one transformer block's linear GEMMs (QKV, output projection, MLP): the GEMMs that
/// run in the low-precision format, before tensor-parallel sharding.
double quantized_weight_count(const workload::TransformerShape& shape);

/// Bytes of scaling state per quantized GEMM: delayed scaling keeps, for each of its three
/// tensors (input, weight, output gradient), an amax history of 1024 fp32 values plus the scale
/// and its inverse; current scaling the amax, scale and inverse; block scaling nothing beyond
/// the per-block scales counted in quantized_bytes_per_element.
double scaling_state_bytes_per_gemm(plan::Precision precision, plan::Fp8Recipe recipe);

/// The low-precision weight copies and scaling state one GPU holds (zero outside fp8, mxfp8 and
/// nvfp4): the copies (quantized_copies) of every linear weight of its stage's layers but those
/// kept in bf16, split by tp, or under FSDP/ZeRO-3 of the (1 + prefetched) blocks it has gathered.
Bytes quantized_copy_bytes(const workload::TransformerShape& shape, const plan::Plan& plan, int fsdp_prefetch_units,
                           bool fp8_any_layout);

/// The share of a model's parameters kept in the low-precision format alone under fp8-params=on
/// (0 otherwise): every weight but the embedding and the output layer, which Megatron-Core keeps in
/// 16-bit (norm, router and bias weights, well under 1%, are counted with the quantized ones).
double fp8_weight_share(const workload::Workload& workload, const plan::Plan& plan);

/// The peak a GEMM operator runs at: the plan's precision for the quantized linear GEMMs, bf16 for
/// the other GEMMs of a low-precision plan (attention core, output layer).
FlopsPerSecond gemm_peak(const topology::GpuSpec& gpu, plan::Precision precision, const Operator& op);

/// InputError (file = `topology_file`) when the GPU has no peak for the precision (mxfp8 or nvfp4
/// before Blackwell, fp8 before Hopper): the topology file's gpu/peak names what it runs.
void check_precision_supported(const topology::GpuSpec& gpu, plan::Precision precision,
                               const std::string& topology_file);

}  // namespace stepcast::cost
