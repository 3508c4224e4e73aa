// Advice for an MoE plan that does not fit. Megatron-LM's MoE guide lists the levers for expert
// memory: expert parallel (each rank holds E/ep experts), expert tensor parallel, pipeline
// stages and the distributed optimizer (state sharded over the expert data-parallel ranks);
// stepcast picks among them by which part of the model state holds the bytes.
#include "stepcast/report/moe_fit_hint.hpp"

#include <fmt/format.h>

#include <utility>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/moe_memory.hpp"

namespace stepcast::report {

namespace {

// The expert-parallel degrees above the plan's that divide the experts and fold the stage's GPUs
// (tp x dp divisible by etp x ep): the next and the largest; 0 if none.
std::pair<int, int> larger_ep(const plan::Plan& plan, int experts) {
  const long gpus = static_cast<long>(plan.tp) * plan.dp;
  std::pair<int, int> out{0, 0};
  for (int ep = plan.ep + 1; ep <= experts; ++ep) {
    if (experts % ep != 0 || gpus % (static_cast<long>(plan.expert_tp()) * ep) != 0) continue;
    if (out.first == 0) out.first = ep;
    out.second = ep;
  }
  return out;
}

}  // namespace

std::string moe_fit_hint(const plan::Plan& plan, const workload::Workload& workload) {
  const cost::MoeModelState state = cost::moe_state_split(workload, plan);
  const Bytes experts = state.experts.total();
  const Bytes dense = state.dense.total();
  std::string out = fmt::format("  model state per GPU: routed experts {}, dense layers {}\n", format_bytes(experts),
                                format_bytes(dense));
  if (!(experts > dense)) {
    out += "  try a larger tp= or pp= to split the dense layers further";
    out += plan.zero_stage() == 0 ? ", or zero=1 to shard their optimizer state over dp\n" : "\n";
    if (plan.zero_stage() < 3 && plan.dp > 1) {
      out += fmt::format(
          "  try fsdp=full (or zero=3): the dense layers' parameters and gradients sharded over dp={} "
          "too, each block gathered as it runs\n",
          plan.dp);
    }
    return out;
  }
  const int per_block = workload.shape->moe->experts;
  const auto [next, largest] = larger_ep(plan, per_block);
  if (next > 0) {
    out += fmt::format("  try ep={}{} (now {}): each GPU holds {} of the {} routed experts of a block instead of {}\n",
                       next, largest > next ? fmt::format(" or up to {}", largest) : std::string(), plan.ep,
                       per_block / next, per_block, per_block / plan.ep);
  } else {
    out += fmt::format("  try a larger etp= (now {}): each expert's matrices split over more GPUs\n", plan.expert_tp());
  }
  if (plan.zero_stage() == 0 && plan.expert_dp() > 1) {
    out += fmt::format(
        "  try zero=1 (Megatron's distributed optimizer): the experts' optimizer state sharded over their {} expert "
        "data-parallel ranks\n",
        plan.expert_dp());
  }
  if (plan.zero_stage() < 3 && plan.dp > 1 && plan.expert_dp() > 1) {
    // TorchTitan's FSDP2 and DeepSpeed-MoE's ZeRO shard the experts over the expert data-parallel ranks.
    out += fmt::format(
        "  try fsdp=full (or zero=3): the experts' parameters and gradients sharded over their {} expert data-parallel "
        "ranks too, each block's experts gathered as it runs\n",
        plan.expert_dp());
  }
  out += fmt::format("  try a larger pp= (now {}): each pipeline stage holds only its own layers' experts\n", plan.pp);
  return out;
}

}  // namespace stepcast::report
