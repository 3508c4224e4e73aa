// LoRA's trained parameters: only the adapters (Hu et al. 2021; Megatron-Bridge applies them
// before the distributed wrapping, so DDP and the distributed optimizer see the adapters alone).
#include "stepcast/cost/peft.hpp"

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/operators.hpp"

namespace stepcast::cost {

ParameterShare parameters_per_model_rank(const workload::Workload& workload, const plan::Plan& plan) {
  const double share = workload.parameters / (static_cast<double>(plan.tp) * plan.pp);
  if (plan.peft != plan::Peft::kLora) return {share, 0.0};
  STEPCAST_ASSERT(workload.shape.has_value(), "a LoRA plan needs a workload with a shape (plan rule)");
  const workload::TransformerShape& shape = *workload.shape;
  OperatorContext ctx = operator_context(plan);
  ctx.kind = layer_kinds(shape, 0, 1).front().first;
  const double per_layer = adapter_parameters(layer_operators(shape, ctx));
  return {per_layer * shape.layers / plan.pp, share};
}

}  // namespace stepcast::cost
