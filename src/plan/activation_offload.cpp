// Megatron-Core's activation offload (TransformerConfig cpu_offloading, cpu_offloading_num_layers):
// the rules its __post_init__ sets, in megatron/core/transformer/transformer_config.py.
#include "activation_offload.hpp"

#include <fmt/format.h>

#include "rule_text.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::plan {

void add_offload_problems(const Plan& p, const workload::Workload& workload, std::vector<Verdict>& out) {
  if (p.offload_layers == 0) return;
  const int layers = workload.shape ? workload.shape->layers : 0;
  // "CPU offloading can be done only for layers less than num_layers".
  if (p.offload_layers >= layers)
    out.push_back({Rule::kOffloadBelowLayers, {{"offload", p.offload_layers}, {"layers", layers}}});
  // "Currently there is no support for Pipeline parallelism with CPU offloading".
  if (p.pp > 1) out.push_back({Rule::kOffloadNeedsNoPipeline, {{"pp", p.pp}}});
  // "CPU offloading does not work when activation recomputation is enabled".
  if (p.recompute != Recompute::kNone) {
    out.push_back({Rule::kOffloadNeedsNoRecompute, {{"recompute", std::string(to_string(p.recompute))}}});
  }
}

std::string describe_offload(const Verdict& v) {
  switch (v.rule) {
    case Rule::kOffloadBelowLayers:
      return fmt::format(
          "offload-layers ({}) must be fewer than the model's transformer layers ({}): Megatron-Core offloads "
          "cpu_offloading_num_layers < num_layers",
          v.number("offload"), v.number("layers"));
    case Rule::kOffloadNeedsNoPipeline:
      return fmt::format(
          "offload-layers= needs pp=1 (got pp={}): Megatron-Core has no activation offload with pipeline parallelism",
          v.number("pp"));
    case Rule::kOffloadNeedsNoRecompute:
      return fmt::format(
          "offload-layers= needs recompute=none (got recompute={}): Megatron-Core does not offload activations "
          "together with recomputation",
          v.text("recompute"));
    default:
      STEPCAST_UNREACHABLE("an activation offload rule");
  }
}

}  // namespace stepcast::plan
