// Walking the recorded dependencies back from the step's last node.
#include "critical_path.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "stepcast/core/errors.hpp"

namespace stepcast::sim::detail {

namespace {

std::string where(const PathNode& n, bool with_replica) {
  return with_replica ? fmt::format("stage {}, replica {}", n.stage, n.replica) : fmt::format("stage {}", n.stage);
}

std::string describe(const PathNode& n, bool with_replica, const graph::StepGraph& graph) {
  switch (n.kind) {
    case PathNode::Kind::kTask:
      return fmt::format("{} ({})", task_name(n.op), where(n, with_replica));
    case PathNode::Kind::kSend:
      return with_replica
                 ? fmt::format("send {} (stage {} -> {}, replica {})", task_name(n.op), n.stage, n.to_stage, n.replica)
                 : fmt::format("send {} (stage {} -> {})", task_name(n.op), n.stage, n.to_stage);
    case PathNode::Kind::kRequest:
      return fmt::format("{} (stage {})", graph.comm[n.comm].name, n.stage);
    case PathNode::Kind::kOptimizer:
      return fmt::format("optimizer ({})", where(n, with_replica));
  }
  STEPCAST_UNREACHABLE("unknown path node");
}

}  // namespace

std::string task_name(const PipelineOp& op) {
  const char* k = op.kind == PipelineOp::Kind::kForward ? "F" : op.kind == PipelineOp::Kind::kBackward ? "B" : "W";
  return fmt::format("{}{}.{}", k, op.micro_batch, op.chunk);
}

std::vector<std::string> critical_path(const std::vector<PathNode>& nodes, std::int64_t last, bool with_replica,
                                       const graph::StepGraph& graph) {
  std::vector<std::string> chain;
  for (std::int64_t i = last; i >= 0; i = nodes[static_cast<std::size_t>(i)].pred) {
    const PathNode& n = nodes[static_cast<std::size_t>(i)];
    STEPCAST_ASSERT(n.pred < i, "a node's predecessor was recorded before it");
    chain.push_back(describe(n, with_replica, graph));
  }
  std::reverse(chain.begin(), chain.end());
  // A run of the same step (buckets back to back on a busy stream) is written once, counted.
  std::vector<std::string> out;
  for (std::size_t i = 0; i < chain.size();) {
    std::size_t j = i;
    while (j < chain.size() && chain[j] == chain[i]) ++j;
    out.push_back(j - i == 1 ? chain[i] : fmt::format("{} x {}", j - i, chain[i]));
    i = j;
  }
  return out;
}

}  // namespace stepcast::sim::detail
