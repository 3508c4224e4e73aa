// Context parallel (Megatron-Core): every layer pass exchanges keys and values (or heads) over the
// cp ranks of each tensor rank (context_parallel.hpp). The ring's transfers run beside the
// attention steps they feed; the all-gather and all-to-all variants come before the attention.
// Recompute repeats the forward's exchange with the attention. A hybrid's Mamba-2 layers send their
// tensors between sequence and head shards by all-to-alls the scan waits for.
#include <cmath>

#include "graph_support.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/context_parallel.hpp"

namespace stepcast::graph {

void add_context_parallel(const GraphContext& context, StepGraph& graph) {
  const plan::Plan& p = context.plan;
  if (p.cp < 2) return;
  const Layout layout = graph.layout;
  const int cp = p.cp;
  const int stride = graph.layout.replica_stride();
  // The cp ranks of a tensor rank are consecutive replicas (plan.hpp); each tensor rank has its group.
  const auto members = [layout, cp](int stage) { return detail::replica_blocks(layout, stage, cp); };
  GroupSpec all{"context", cp, stride, topology::Concurrency{p.tp, 1}, Representation::kOwnReplicas, members};
  // A ring step is as slow as its slowest hop: the wrap-around from the last cp rank to the
  // first, which crosses nodes whenever the group does.
  GroupSpec hop = all;
  hop.ranks = 2;
  hop.stride = stride * (cp - 1);
  const std::size_t all_group = graph.add_group(std::move(all));
  const std::size_t hop_group = graph.add_group(std::move(hop));
  const workload::TransformerShape& shape = *context.workload.shape;
  // A hybrid exchanges keys and values in its attention layers alone, and its Mamba-2 layers'
  // tensors by their own all-to-alls.
  std::vector<std::vector<int>> attention_layers;
  std::vector<std::vector<int>> mamba_layers;
  if (shape.hybrid) {
    attention_layers = detail::blocks_per_layer(graph, &cost::ChunkCompute::attention_blocks);
    mamba_layers = detail::blocks_per_layer(graph, &cost::ChunkCompute::mamba_blocks);
  }
  const bool recomputed = p.recompute != plan::Recompute::kNone;
  // A message's node: its whole calls in each layer pass that runs it, the forward's again under
  // recompute; the compute waits for it unless the caller says otherwise.
  const auto node_of = [&](const cost::ContextMessage& msg, std::size_t group,
                           const std::vector<std::vector<int>>& per_layer) {
    CommNode node;
    node.name = std::string(msg.name);
    node.op = msg.op;
    node.group = group;
    node.size = msg.size;
    node.anchor = Anchor::kLayerStart;
    node.layer_calls = static_cast<int>(std::lround(msg.calls));
    STEPCAST_ASSERT(std::abs(msg.calls - node.layer_calls) < 1e-9, "whole calls per layer");
    node.per_layer = per_layer;
    node.pass = msg.forward ? (recomputed ? Pass::kForwardAndRecompute : Pass::kForward) : Pass::kBackward;
    node.join = Join::kBeforeCompute;
    node.window = Window::kNothing;
    return node;
  };
  for (const cost::ContextMessage& msg : cost::mamba_context_exchange(shape, p)) {
    graph.comm.push_back(node_of(msg, all_group, mamba_layers));
  }
  for (const cost::ContextMessage& msg : cost::context_exchange(shape, p)) {
    CommNode node = node_of(msg, msg.op == cost::CollectiveOp::kSendRecv ? hop_group : all_group, attention_layers);
    // The ring's messages run in order beside the attention; its last hop (dK/dV home) ends the
    // exchange and hides behind nothing. The other exchanges come before the attention.
    if (p.cp_comm == plan::ContextComm::kP2p) node.join = Join::kFirstSlice;
    if (msg.overlapped) node.window = Window::kAttentionSteps;
    node.window_steps = cp;
    graph.comm.push_back(std::move(node));
  }
}

}  // namespace stepcast::graph
