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
  // Each kind of layer its own adapters: a hybrid's attention, MLP and Mamba-2 layers adapt
  // different linears.
  OperatorContext ctx = operator_context(plan);
  double adapters = 0.0;
  for (const auto& [kind, count] : layer_kinds(shape, 0, shape.layers)) {
    ctx.kind = kind;
    adapters += adapter_parameters(layer_operators(shape, ctx)) * count;
  }
  return {adapters / plan.pp, share};
}

}  // namespace stepcast::cost
