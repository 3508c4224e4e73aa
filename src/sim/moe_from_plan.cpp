// One MoE block's collectives per pass, in the order Megatron-core's all-to-all dispatcher runs
// them (token_dispatcher.py, MoEAlltoAllTokenDispatcher): the dispatch on the expert-parallel
// group, the expert-TP all-gather of the dispatched rows, the experts, the expert-TP
// reduce-scatter, the combine; the backward runs their gradients in the same shape.
#include "moe_from_plan.hpp"

#include <cmath>

namespace stepcast::sim::detail {

namespace {

// The expert-parallel calls of one pass split around the expert-TP ones: the first half (the
// dispatch) before, the second (the combine) after.
std::vector<ExpertCall> in_order(const std::vector<ExpertCall>& ep, const std::vector<ExpertCall>& etp) {
  std::vector<ExpertCall> out(ep.begin(), ep.begin() + static_cast<std::ptrdiff_t>(ep.size() / 2));
  out.insert(out.end(), etp.begin(), etp.end());
  out.insert(out.end(), ep.begin() + static_cast<std::ptrdiff_t>(ep.size() / 2), ep.end());
  return out;
}

}  // namespace

std::optional<ExpertParallelComm> expert_parallel_comm(const plan::Plan& plan, const cost::StepPrediction& prediction) {
  std::vector<ExpertCall> forward_ep;
  std::vector<ExpertCall> forward_etp;
  std::vector<ExpertCall> backward_ep;
  std::vector<ExpertCall> backward_etp;
  bool any = false;
  for (const cost::CommTerm& t : prediction.communication) {
    if (t.group != cost::CommGroup::kExpert) continue;
    any = true;
    const ExpertCall call{t.op, t.size, t.moe_expert_tp};
    const auto add = [&](std::vector<ExpertCall>& ep, std::vector<ExpertCall>& etp, double calls) {
      for (long i = 0; i < std::lround(calls); ++i) (t.moe_expert_tp ? etp : ep).push_back(call);
    };
    add(forward_ep, forward_etp, t.moe_forward_calls);
    add(backward_ep, backward_etp, t.moe_backward_calls);
  }
  if (!any && plan.ep < 2) return std::nullopt;
  ExpertParallelComm e;
  e.ep = plan.ep;
  e.etp = plan.expert_tp();
  e.forward = in_order(forward_ep, forward_etp);
  e.backward = in_order(backward_ep, backward_etp);
  if (plan.recompute == plan::Recompute::kFull) {
    // Full recompute runs each block's forward again, collectives included, before its backward.
    e.backward.insert(e.backward.begin(), e.forward.begin(), e.forward.end());
  }
  for (const cost::StageCompute& st : prediction.compute_detail.stages) e.stage_blocks.push_back(st.moe_blocks);
  e.beside_compute = plan.moe_overlap;
  return e;
}

}  // namespace stepcast::sim::detail
