// The compute model's operator list as stepcast-kernel-bench times it: every operator priced for
// one micro-batch (cost/operators.hpp), each with the precision it runs in and, for a
// memory-bound operator, the representative kernel the bench runs in its place, sized to move
// exactly the operator's bytes (validate/README.md describes the kernels).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::calibrate {

/// What the representative kernel of a memory-bound operator computes.
enum class MemoryPattern {
  kElementwise,  ///< out[i] = f(in_1[i], ..., in_r[i]): activations, residual adds, rotary, casts, the optimizer
  kRowNorm,      ///< per row: mean of squares, then each element scaled (RMSNorm/LayerNorm)
  kRowSoftmax,   ///< per row: maximum, sum of exponentials, then each element normalised
  kDropout,      ///< element-wise with a 1-byte keep mask: drawn (Philox) and written forward, read backward
  kReduction,    ///< reads its inputs and writes one partial sum per thread block (gradient norm, bias gradients)
  kFill,         ///< writes only (zeroing gradients)
};

/// How the 1-byte-per-element mask of a dropout kernel is used.
enum class MaskAccess { kNone, kRead, kWrite };

/// The kernel the bench runs for a memory-bound operator: `reads` and `writes` tensors of the
/// operator's `elements` elements of `element_bytes` each, plus the mask.
struct MemoryKernel {
  MemoryPattern pattern = MemoryPattern::kElementwise;
  double row_length = 0.0;  ///< row patterns: elements per row (divides the operator's elements)
  int reads = 0;
  int writes = 0;
  int element_bytes = 2;
  MaskAccess mask = MaskAccess::kNone;

  /// Bytes the kernel moves over `elements` elements: elements x (element_bytes x (reads +
  /// writes) + 1 with a mask).
  [[nodiscard]] double bytes(double elements) const;
};

/// One operator of the list with how the bench runs it.
struct BenchOperator {
  cost::Operator op;
  /// GEMMs: the plan's precision; fused attention: bf16 (the model prices it at the 16-bit
  /// peak); memory-bound: the activations' type (bf16/fp16, or fp32 for fp32/tf32 training).
  plan::Precision precision = plan::Precision::kBf16;
  /// Memory-bound operators: the representative kernel; none when no kernel of the patterns
  /// above moves exactly the operator's bytes (the bench then skips it and says so).
  std::optional<MemoryKernel> kernel;
  /// A layer's operators: the kind of layer they belong to (a hybrid's Mamba-2 layer, a layer
  /// with routed experts, one kept in bf16, ...).
  std::optional<cost::LayerKind> layer;
};

/// Every operator the compute model prices for one micro-batch of `plan` (a resolved, valid
/// plan of a workload with a shape): the embedding, one layer of each kind the model's stack
/// holds (cost::layer_kinds: dense and MoE, full and sliding-window attention, a hybrid's
/// Mamba-2, attention and MLP layers, layers kept in bf16), the output layer and loss, and the
/// optimizer step of one GPU, in that order, each pass as operators.hpp lists it
/// (`fp8_any_layout`: the GPU's FP8 GEMMs take any layout, cost::fp8_gemm_any_layout).
std::vector<BenchOperator> bench_operators(const workload::Workload& workload, const plan::Plan& plan,
                                           bool fp8_any_layout);

std::string_view to_string(MemoryPattern pattern);
std::string_view to_string(MaskAccess mask);

}  // namespace stepcast::calibrate
