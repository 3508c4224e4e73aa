// Expert parallel (Megatron-Core's MoE layers and token dispatchers, token_dispatcher.py): each
// MoE block of a micro-batch dispatches its tokens' top-k copies over the expert-parallel group
// before its experts and combines them after; with the all-to-all dispatcher each rank sends
// S = tokens x top-k x h x bytes (nccl-tests' all-to-all size; h: LatentMoE's latent where the
// model has one; tokens: the b s / cp the rank holds, / tp under sequence parallel,
// cost::routed_tokens_per_gpu), the all-gather dispatcher gathers the hidden states of the whole
// group and reduce-scatters the outputs back. With expert tensor
// parallel and sequence parallel the dispatched rows are gathered inside the etp group before the
// experts and reduce-scattered after. The backward runs the gradients of the same calls, and full
// recompute the forward's again. The busiest rank's load factor stretches every call. They sit
// between dependent kernels, unless moe-overlap hides them behind other compute (DeepSeek-V3's
// DualPipe, section 3.2.1; Megatron-Core's a2a overlap). The flex dispatcher (DeepEP, HybridEP)
// sends a token once to each GPU holding one of its experts, not once per expert; across scale-up
// domains it runs two all-to-alls instead: one copy of a token to each other domain holding one of
// its experts, among the GPUs of the same place in each domain, then a copy to each GPU of its
// experts inside the domain; the combine returns them in the reverse order.
#include <algorithm>

#include "expert_groups.hpp"
#include "graph_support.hpp"
#include "stepcast/cost/moe_dispatch.hpp"
#include "stepcast/cost/operators.hpp"

namespace stepcast::graph {

namespace {

struct ExpertCalls {
  std::size_t ep_group = 0;
  std::size_t etp_group = 0;
  bool with_ep = false;
  bool with_etp = false;
  Bytes dispatch;  // S of one dispatch (and of one combine)
  // The flex dispatcher across domains: the all-to-all between domains and its size; `ep_group`
  // and `dispatch` are then the all-to-all inside each domain.
  bool flex = false;
  bool per_gpu = false;  // the flex dispatcher, inside a domain or across: a copy per GPU of a token's experts
  std::size_t between_group = 0;
  Bytes between;
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
  const auto op = cost::CollectiveOp::kAllToAll;
  if (calls.flex) add(calls.between_group, op, calls.between, "MoE dispatch between domains (flex: a copy per domain)");
  if (calls.with_ep) {
    add(calls.ep_group, calls.dispatch_op, calls.dispatch,
        calls.flex      ? "MoE dispatch inside the domain (flex: a copy per GPU)"
        : calls.per_gpu ? "MoE dispatch all-to-all (flex: a copy per GPU)"
                        : (a2a ? "MoE dispatch all-to-all" : "MoE dispatch all-gather"));
  }
  if (calls.with_etp) {
    add(calls.etp_group, cost::CollectiveOp::kAllGather, calls.expert_tp, "MoE expert-TP all-gather");
    add(calls.etp_group, cost::CollectiveOp::kReduceScatter, calls.expert_tp, "MoE expert-TP reduce-scatter");
  }
  if (calls.with_ep) {
    add(calls.ep_group, calls.combine_op, calls.dispatch,
        calls.flex      ? "MoE combine inside the domain (flex: a copy per GPU)"
        : calls.per_gpu ? "MoE combine all-to-all (flex: a copy per GPU)"
                        : (a2a ? "MoE combine all-to-all" : "MoE combine reduce-scatter"));
  }
  if (calls.flex) add(calls.between_group, op, calls.between, "MoE combine between domains (flex: a copy per domain)");
}

/// The flex dispatcher's two groups of an expert-parallel group spanning `domains` scale-up
/// domains (its ranks in domain order, ep / domains in each): the ranks at the same place in every
/// domain, and each domain's ranks.
void add_flex_groups(StepGraph& graph, const GroupSpec& ep, int domains, const Layout& layout,
                     const detail::ExpertFold& fold, ExpertCalls& calls) {
  const int per_domain = ep.ranks / domains;
  GroupSpec between{ep.role,
                    domains,
                    ep.stride * per_domain,
                    topology::Concurrency{per_domain, ep.stride},
                    Representation::kEveryGroup,
                    [layout, fold, per_domain](int stage) {
                      GroupSets out;
                      for (const std::vector<int>& g : fold.groups(layout, stage, false)) {
                        for (int i = 0; i < per_domain; ++i) {
                          std::vector<int> rail;
                          for (std::size_t at = static_cast<std::size_t>(i); at < g.size();
                               at += static_cast<std::size_t>(per_domain))
                            rail.push_back(g[at]);
                          out.push_back(std::move(rail));
                        }
                      }
                      return out;
                    }};
  GroupSpec inside{ep.role,
                   per_domain,
                   ep.stride,
                   ep.concurrency,
                   Representation::kEveryGroup,
                   [layout, fold, per_domain](int stage) {
                     GroupSets out;
                     for (const std::vector<int>& g : fold.groups(layout, stage, false)) {
                       for (std::size_t at = 0; at < g.size(); at += static_cast<std::size_t>(per_domain))
                         out.emplace_back(g.begin() + static_cast<std::ptrdiff_t>(at),
                                          g.begin() + static_cast<std::ptrdiff_t>(at) + per_domain);
                     }
                     return out;
                   }};
  calls.flex = true;
  calls.between_group = graph.add_group(std::move(between));
  calls.ep_group = graph.add_group(std::move(inside));
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
    const workload::MoeShape& moe = *shape.moe;
    const cost::RoutedExperts routing{moe.experts, moe.top_k, moe.router_groups, moe.router_group_topk};
    const bool a2a = p.moe_dispatcher != plan::MoeDispatcher::kAllGather;
    const bool flex = p.moe_dispatcher == plan::MoeDispatcher::kFlex;
    // Copies of a token: the all-to-all one per expert, the flex dispatcher one per GPU holding
    // one of its experts, the all-gather one per rank.
    // (A plan whose ep does not divide the experts is refused before its graph is built.)
    const bool even = moe.experts % p.ep == 0;
    const double copies =
        flex && even ? cost::ranks_reached_per_token(routing, p.ep) : (a2a ? moe.top_k : static_cast<double>(p.ep));
    calls.dispatch = Bytes(routed * copies * shape.expert_width() * bytes * load);
    calls.per_gpu = flex;
    calls.dispatch_op = a2a ? cost::CollectiveOp::kAllToAll : cost::CollectiveOp::kAllGather;
    calls.combine_op = a2a ? cost::CollectiveOp::kAllToAll : cost::CollectiveOp::kReduceScatter;
    const int domains = flex ? context.topology.tiers(ep.ranks, ep.stride, ep.concurrency).nodes : 1;
    if (domains > 1 && p.ep % domains == 0 && moe.experts % domains == 0) {
      add_flex_groups(graph, ep, domains, layout, fold, calls);
      // nccl-tests' S of an all-to-all counts the share a rank keeps: d remote copies are S (D-1)/D.
      const double remote = cost::remote_domains_per_token(routing, domains);
      calls.between = Bytes(routed * remote * shape.expert_width() * bytes * load * domains / (domains - 1));
    } else {
      calls.ep_group = graph.add_group(std::move(ep));
    }
    calls.with_ep = true;
  }
  if (etp > 1 && p.sequence_parallel) {
    GroupSpec group{"expert parallel", etp, 1, {}, Representation::kEveryGroup, [layout, fold](int stage) {
                      return fold.groups(layout, stage, true);
                    }};
    calls.etp_group = graph.add_group(std::move(group));
    calls.with_etp = true;
    calls.expert_tp = Bytes(routed * etp * shape.moe->top_k * shape.expert_width() * bytes * load);
  }
  if (!calls.with_ep && !calls.with_etp) return;
  CommNode node;
  node.anchor = Anchor::kLayerStart;
  node.per_layer = detail::moe_blocks_per_layer(graph);
  node.join = p.moe_overlap ? Join::kLayerEnd : Join::kBeforeCompute;
  node.window = Window::kLayerPass;
  // Full recompute and the "moe" module run the layer's forward again, its all-to-alls with it.
  const bool again = p.recompute == plan::Recompute::kFull || cost::recomputes(ops, plan::kRecomputeMoe);
  node.pass = again ? Pass::kForwardAndRecompute : Pass::kForward;
  add_pass(context, graph, calls, node, false);
  node.pass = Pass::kBackward;
  add_pass(context, graph, calls, node, true);
}

}  // namespace stepcast::graph
