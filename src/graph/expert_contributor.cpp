// Expert parallel (Megatron-Core's MoE layers and token dispatchers, token_dispatcher.py): each
// MoE block of a micro-batch dispatches its tokens' top-k copies over the expert-parallel group
// before its experts and combines them after; with the all-to-all dispatcher each rank sends
// S = tokens x top-k x h x bytes (nccl-tests' all-to-all size; tokens: the b s / cp the rank holds,
// / tp under sequence parallel, cost::routed_tokens_per_gpu), the all-gather dispatcher gathers
// the hidden states of the whole group and reduce-scatters the outputs back. With expert tensor
// parallel and sequence parallel the dispatched rows are gathered inside the etp group before the
// experts and reduce-scattered after. The backward runs the gradients of the same calls, and full
// recompute the forward's again. The busiest rank's load factor stretches every call. They sit
// between dependent kernels, unless moe-overlap hides them behind other compute (DeepSeek-V3's
// DualPipe, section 3.2.1; Megatron-Core's a2a overlap).
#include <algorithm>

#include "expert_groups.hpp"
#include "graph_support.hpp"
#include "stepcast/cost/operators.hpp"

namespace stepcast::graph {

namespace {

struct ExpertCalls {
  std::size_t ep_group = 0;
  std::size_t etp_group = 0;
  bool with_ep = false;
  bool with_etp = false;
  Bytes dispatch;  // S of one dispatch (and of one combine)
  cost::CollectiveOp dispatch_op = cost::CollectiveOp::kAllToAll;
  cost::CollectiveOp combine_op = cost::CollectiveOp::kAllToAll;
  Bytes expert_tp;  // S of one expert-TP all-gather (and reduce-scatter)
};

/// One pass's calls of an MoE block, in the order the dispatcher runs them.
void add_pass(const GraphContext& context, StepGraph& graph, const ExpertCalls& calls, CommNode node, bool backward) {
  const std::string_view pass = backward ? "backward" : "forward";
  const bool a2a = calls.dispatch_op == cost::CollectiveOp::kAllToAll;
  const auto add = [&](std::size_t group, cost::CollectiveOp op, Bytes size, std::string_view name) {
    node.group = group;
    node.op = op;
    node.size = size;
    node.name = detail::with_placement(context, graph.groups[group], name, pass);
    graph.comm.push_back(node);
  };
  if (calls.with_ep)
    add(calls.ep_group, calls.dispatch_op, calls.dispatch, a2a ? "MoE dispatch all-to-all" : "MoE dispatch all-gather");
  if (calls.with_etp) {
    add(calls.etp_group, cost::CollectiveOp::kAllGather, calls.expert_tp, "MoE expert-TP all-gather");
    add(calls.etp_group, cost::CollectiveOp::kReduceScatter, calls.expert_tp, "MoE expert-TP reduce-scatter");
  }
  if (calls.with_ep)
    add(calls.ep_group, calls.combine_op, calls.dispatch,
        a2a ? "MoE combine all-to-all" : "MoE combine reduce-scatter");
}

}  // namespace

void add_expert_parallel(const GraphContext& context, StepGraph& graph) {
  const plan::Plan& p = context.plan;
  const workload::TransformerShape& shape = *context.workload.shape;
  const int etp = p.expert_tp();
  if (!shape.moe || (p.ep < 2 && etp < 2)) return;
  const cost::OperatorContext ops = cost::operator_context(p);
  const double load = ops.experts.load_factor;
  const double routed = cost::routed_tokens_per_gpu(ops);
  const double bytes = ops.activation_bytes;
  const Layout layout = graph.layout;
  const detail::ExpertFold fold{etp, p.ep};
  ExpertCalls calls;
  if (p.ep > 1) {
    // Expert-parallel ranks sit etp apart while the group stays inside a stage's tensor ranks;
    // beyond them, etp dense positions of the stage apart (the replicas' stride per tp).
    GroupSpec ep{"expert parallel",
                 p.ep,
                 etp * p.ep <= p.tp ? etp : std::max(1, etp * layout.replica_stride() / p.tp),
                 topology::Concurrency{etp, 1},
                 Representation::kEveryGroup,
                 [layout, fold](int stage) { return fold.groups(layout, stage, false); }};
    calls.ep_group = graph.add_group(std::move(ep));
    calls.with_ep = true;
    const bool a2a = p.moe_dispatcher == plan::MoeDispatcher::kAllToAll;
    calls.dispatch = Bytes(routed * (a2a ? shape.moe->top_k : p.ep) * shape.hidden * bytes * load);
    calls.dispatch_op = a2a ? cost::CollectiveOp::kAllToAll : cost::CollectiveOp::kAllGather;
    calls.combine_op = a2a ? cost::CollectiveOp::kAllToAll : cost::CollectiveOp::kReduceScatter;
  }
  if (etp > 1 && p.sequence_parallel) {
    GroupSpec group{"expert parallel", etp, 1, {}, Representation::kEveryGroup, [layout, fold](int stage) {
                      return fold.groups(layout, stage, true);
                    }};
    calls.etp_group = graph.add_group(std::move(group));
    calls.with_etp = true;
    calls.expert_tp = Bytes(routed * etp * shape.moe->top_k * shape.hidden * bytes * load);
  }
  if (!calls.with_ep && !calls.with_etp) return;
  CommNode node;
  node.anchor = Anchor::kLayerStart;
  node.per_layer = detail::moe_blocks_per_layer(graph);
  node.join = p.moe_overlap ? Join::kLayerEnd : Join::kBeforeCompute;
  node.window = Window::kLayerPass;
  node.pass = p.recompute == plan::Recompute::kFull ? Pass::kForwardAndRecompute : Pass::kForward;
  add_pass(context, graph, calls, node, false);
  node.pass = Pass::kBackward;
  add_pass(context, graph, calls, node, true);
}

}  // namespace stepcast::graph
