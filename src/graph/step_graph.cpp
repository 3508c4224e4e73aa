// The step graph's own arithmetic: group registration, calls per layer, slices per pass.
#include "stepcast/graph/step_graph.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"

namespace stepcast::graph {

std::size_t StepGraph::add_group(GroupSpec spec) {
  STEPCAST_ASSERT(spec.ranks >= 1 && spec.members, "a group has ranks and knows its members");
  groups.push_back(std::move(spec));
  return groups.size() - 1;
}

int StageWork::passes(int chunk) const { return std::max(1, chunks[static_cast<std::size_t>(chunk)].layers); }

int StageWork::layers() const {
  int n = 0;
  for (const cost::ChunkCompute& c : chunks) n += c.layers;
  return n;
}

int StepGraph::rounds_at(const CommNode& node, int stage, int chunk, int layer) const {
  if (layer >= stages[static_cast<std::size_t>(stage)].chunks[static_cast<std::size_t>(chunk)].layers) return 0;
  if (node.per_layer.empty()) return 1;
  const auto& row =
      node.per_layer[static_cast<std::size_t>(stage) * static_cast<std::size_t>(vp) + static_cast<std::size_t>(chunk)];
  return row[static_cast<std::size_t>(layer)];
}

int backward_slices(const plan::Plan& plan, int forward_slices) {
  // The backward pass holds the forward's collectives once, and once more where full recompute
  // repeats the forward: passes of the transformer minus the forward and one backward's compute.
  return forward_slices * static_cast<int>(cost::passes_of_transformer(plan.recompute) - 2.0);
}

}  // namespace stepcast::graph
