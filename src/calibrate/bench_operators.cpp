// The representative kernel of each memory-bound operator, chosen by what the operator does
// (its name in cost/operators.cpp) and sized from its bytes: the bench must move exactly the
// bytes the model prices, or the fitted HBM efficiency would mean something else.
#include "stepcast/calibrate/bench_operators.hpp"

#include <cmath>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/memory.hpp"

namespace stepcast::calibrate {
namespace {

using cost::Operator;
using cost::OpKind;
using cost::OpPart;
using cost::OpPass;

/// The stream count a byte total makes, when it is a whole number.
std::optional<int> whole(double streams) {
  const double r = std::round(streams);
  if (r < 0.0 || std::fabs(streams - r) > 1e-9 * std::max(1.0, r)) return std::nullopt;
  return static_cast<int>(r);
}

bool has(std::string_view name, std::string_view part) { return name.find(part) != std::string_view::npos; }

/// The pattern of a memory-bound operator of operators.cpp, and the length of its rows.
struct Shape {
  MemoryPattern pattern = MemoryPattern::kElementwise;
  double row_length = 0.0;
};

Shape pattern_of(const Operator& op, const workload::TransformerShape& s, const plan::Plan& plan) {
  const std::string_view n = op.name;
  // Attention's softmax runs over each query's row of keys (s); the cross-entropy over each
  // token's row of the rank's vocabulary shard (Megatron-LM's vocabulary-parallel loss).
  if (has(n, "softmax")) return {MemoryPattern::kRowSoftmax, static_cast<double>(plan.seq_len)};
  if (has(n, "cross-entropy")) return {MemoryPattern::kRowSoftmax, static_cast<double>(s.vocab) / plan.tp};
  if (has(n, "dropout")) return {MemoryPattern::kDropout, 0.0};
  if (n == "gradient norm" || n == "bias gradients") return {MemoryPattern::kReduction, 0.0};
  if (n == "zero gradients") return {MemoryPattern::kFill, 0.0};
  if (has(n, "norm")) return {MemoryPattern::kRowNorm, static_cast<double>(s.hidden)};
  return {MemoryPattern::kElementwise, 0.0};
}

/// The kernel that moves exactly `op.bytes` with the operator's pattern, or none.
std::optional<MemoryKernel> memory_kernel(const Operator& op, const workload::TransformerShape& s,
                                          const plan::Plan& plan) {
  const cost::StateBytesPerParameter per = cost::state_bytes_per_parameter(plan.precision, plan.optimizer);
  const Shape shape = pattern_of(op, s, plan);
  MemoryKernel k;
  k.pattern = shape.pattern;
  k.row_length = shape.row_length;
  // The optimizer streams its gradients' type (its state is a whole number of them); the rest
  // of the step streams activations, whose type is the parameters' working precision.
  k.element_bytes = static_cast<int>(op.part == OpPart::kOptimizer ? per.gradients : per.parameters);
  if (k.pattern == MemoryPattern::kDropout)
    k.mask = op.pass == OpPass::kForward || op.pass == OpPass::kRecompute ? MaskAccess::kWrite : MaskAccess::kRead;
  const double n = op.elements;
  if (!(n > 0.0)) return std::nullopt;
  const double mask_bytes = k.mask == MaskAccess::kNone ? 0.0 : n;
  const std::optional<int> streams = whole((op.bytes.value() - mask_bytes) / (n * k.element_bytes));
  if (!streams || *streams < 1) return std::nullopt;
  switch (k.pattern) {
    case MemoryPattern::kReduction:
      k.writes = 0;
      break;
    case MemoryPattern::kFill:
      k.writes = *streams;
      break;
    default:
      k.writes = 1;
      break;
  }
  if (op.name == "optimizer update") {
    // Adam reads the gradients and its state and writes the state back and the working weights
    // (ZeRO section 3.1's bytes per parameter, cost/memory.cpp).
    const std::optional<int> written = whole((per.optimizer + per.parameters) / k.element_bytes);
    if (!written || *written > *streams) return std::nullopt;
    k.writes = *written;
  }
  k.reads = *streams - k.writes;
  if (k.row_length > 0.0) {
    // Rows must tile the elements exactly; a vocabulary that tensor parallel does not divide
    // (Megatron pads it) makes no whole rows, and the operator is run element-wise instead.
    const std::optional<int> rows = whole(n / k.row_length);
    if (!rows || std::floor(k.row_length) != k.row_length) {
      k.pattern = MemoryPattern::kElementwise;
      k.row_length = 0.0;
    }
  }
  STEPCAST_ASSERT(std::fabs(k.bytes(n) - op.bytes.value()) <= 1e-9 * op.bytes.value(),
                  "a memory kernel moves the operator's bytes");
  return k;
}

}  // namespace

double MemoryKernel::bytes(double elements) const {
  return elements * (static_cast<double>(element_bytes) * (reads + writes) + (mask == MaskAccess::kNone ? 0.0 : 1.0));
}

std::vector<BenchOperator> bench_operators(const workload::Workload& workload, const plan::Plan& plan,
                                           bool fp8_any_layout) {
  STEPCAST_ASSERT(workload.shape.has_value(), "bench_operators needs a workload with a shape");
  const workload::TransformerShape& shape = *workload.shape;
  cost::OperatorContext ctx = cost::operator_context(plan);
  ctx.fp8_any_layout = fp8_any_layout;
  // Each operator with the kind of layer it belongs to (none outside the layers): the compute
  // model prices every kind of layer the stack holds from its own list (cost/compute.cpp).
  std::vector<std::pair<Operator, std::optional<cost::LayerKind>>> ops;
  const auto append = [&ops](const std::vector<Operator>& list, std::optional<cost::LayerKind> kind) {
    for (const Operator& op : list) ops.emplace_back(op, kind);
  };
  append(cost::embedding_operators(shape, ctx), std::nullopt);
  for (const auto& [kind, count] : cost::layer_kinds(shape, 0, shape.layers, cost::bf16_layers(plan))) {
    cost::OperatorContext kind_ctx = ctx;
    kind_ctx.kind = kind;
    append(cost::layer_operators(shape, kind_ctx), kind);
  }
  append(cost::head_operators(shape, ctx), std::nullopt);
  append(cost::step_optimizer_operators(workload, plan, fp8_any_layout), std::nullopt);
  // The activations' type: 16-bit under mixed precision (fp8 GEMMs take and return 16-bit
  // tensors), fp32 otherwise (cost::operator_context).
  const plan::Precision activations = ctx.activation_bytes == 4.0                ? plan::Precision::kFp32
                                      : plan.precision == plan::Precision::kFp16 ? plan::Precision::kFp16
                                                                                 : plan::Precision::kBf16;
  std::vector<BenchOperator> out;
  out.reserve(ops.size());
  for (const auto& [op, kind] : ops) {
    BenchOperator b;
    b.op = op;
    b.layer = kind;
    switch (op.kind) {
      // A low-precision plan runs only its layers' linear GEMMs quantized; the others in 16-bit.
      case OpKind::kGemm:
        b.precision = cost::is_low_precision(plan.precision) && !op.low_precision ? activations : plan.precision;
        break;
      case OpKind::kFusedAttention:
        b.precision = plan::Precision::kBf16;
        break;
      case OpKind::kMemory:
        b.precision = activations;
        b.kernel = memory_kernel(op, shape, plan);
        break;
    }
    out.push_back(b);
  }
  return out;
}

std::string_view to_string(MemoryPattern pattern) {
  switch (pattern) {
    case MemoryPattern::kElementwise:
      return "elementwise";
    case MemoryPattern::kRowNorm:
      return "row-norm";
    case MemoryPattern::kRowSoftmax:
      return "row-softmax";
    case MemoryPattern::kDropout:
      return "dropout";
    case MemoryPattern::kReduction:
      return "reduction";
    case MemoryPattern::kFill:
      return "fill";
  }
  STEPCAST_UNREACHABLE("unknown memory pattern");
}

std::string_view to_string(MaskAccess mask) {
  switch (mask) {
    case MaskAccess::kNone:
      return "none";
    case MaskAccess::kRead:
      return "read";
    case MaskAccess::kWrite:
      return "write";
  }
  STEPCAST_UNREACHABLE("unknown mask access");
}

}  // namespace stepcast::calibrate
