// Megatron-Core accumulates each weight gradient straight into the parameter's main_grad
// (gradient_accumulation_fusion) and gives autograd a placeholder of the weight's shape, in the
// weight's dtype, so that its gradient hooks still run. Transformer Engine's linear modules
// (Linear, LayerNormLinear, LayerNormMLP, GroupedLinear) take theirs from get_dummy_wgrad, which
// allocates one per (shape, dtype) and keeps it for the rest of the run; Megatron-Core's own
// output layer allocates a new one in each backward.
#include "stepcast/cost/wgrad_placeholders.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/layer_map.hpp"

namespace stepcast::cost {

namespace {

/// A placeholder takes its weight's dtype: the working precision's copy.
double weight_bytes(const plan::Plan& plan) {
  return state_bytes_per_parameter(plan.precision, plan.optimizer).parameters;
}

}  // namespace

Bytes layer_wgrad_placeholders(const workload::TransformerShape& shape, const plan::Plan& plan, int stage) {
  if (!plan.megatron_ddp()) return Bytes(0.0);
  // Each weight-gradient GEMM's m x n is its weight's shape (a routed expert's, `batch` of them
  // sharing it). Left out: frozen weights (peft=lora), which have none; LoRA adapters and the
  // router, Megatron-Core's own layers, whose placeholder or gradient lives only through its hook.
  std::vector<std::pair<double, double>> shapes;
  OperatorContext ctx = operator_context(plan);
  const plan::LayerMap map = plan::layer_map(plan, shape.layers, shape.mtp_layers);
  for (const auto& [kind, count] : stage_layer_kinds(shape, map, stage, bf16_layers(plan))) {
    ctx.kind = kind;
    for (const Operator& op : layer_operators(shape, ctx)) {
      if (op.kind != OpKind::kGemm || op.pass != OpPass::kWeightGrad || op.adapter) continue;
      if (op.name.starts_with("router")) continue;
      const std::pair<double, double> weight{op.gemm.m, op.gemm.n};
      if (std::find(shapes.begin(), shapes.end(), weight) == shapes.end()) shapes.push_back(weight);
    }
  }
  double elements = 0.0;
  for (const auto& [rows, cols] : shapes) elements += rows * cols;
  return Bytes(elements * weight_bytes(plan));
}

Bytes output_wgrad_placeholder(const workload::TransformerShape& shape, const plan::Plan& plan) {
  if (!plan.megatron_ddp() || plan.peft != plan::Peft::kNone) return Bytes(0.0);
  return Bytes(static_cast<double>(shape.vocab) / plan.tp * shape.hidden * weight_bytes(plan));
}

}  // namespace stepcast::cost
