// Pipeline parallel: each stage sends every micro-batch's activations forward and its gradients
// backward once per model chunk, s x b x h / t per GPU (Megatron's scatter/gather optimisation,
// Narayanan et al. 2021 section 4.1). 1F1B, GPipe and ZB-H1 block on them (Megatron-LM's p2p
// calls); the interleaved schedule posts them before the next chunk's compute and waits after it
// (--overlap-p2p-communication, its default: megatron/core/pipeline_parallel/schedules.py).
#include "graph_support.hpp"

namespace stepcast::graph {

void add_pipeline_parallel(const GraphContext& context, StepGraph& graph) {
  const plan::Plan& p = context.plan;
  if (p.pp < 2) return;
  const Layout layout = graph.layout;
  GroupSpec spec;
  spec.role = "pipeline";
  spec.ranks = 2;
  spec.stride = layout.stage_stride();
  // Every tensor rank of a stage sends to its peer of the next stage at once, through the NICs:
  // with the stages outermost, every GPU of the stage, all side by side.
  spec.concurrency = topology::Concurrency{layout.stages_outermost ? p.tp * layout.replicas : p.tp, 1};
  // At stage s: each GPU with its peer on the next stage (the last stage's on the first, where
  // the interleaved schedule passes a micro-batch to the next model chunk).
  spec.members = [layout](int stage) {
    GroupSets pairs;
    const int next = (stage + 1) % layout.pp;
    for (int r = 0; r < layout.replicas; ++r) {
      for (int t = 0; t < layout.tp; ++t) pairs.push_back({layout.gpu(r, stage, t), layout.gpu(r, next, t)});
    }
    return pairs;
  };
  const bool interleaved = p.schedule == plan::Schedule::kInterleaved;
  CommNode node;
  node.name = interleaved ? "PP send/recv (beside the next chunk's compute: interleaved)" : "PP send/recv";
  node.group = graph.add_group(std::move(spec));
  node.op = cost::CollectiveOp::kSendRecv;
  node.size = detail::activation(context) / p.tp;
  node.anchor = Anchor::kStageSend;
  node.blocking = !interleaved;
  graph.comm.push_back(std::move(node));
}

}  // namespace stepcast::graph
