// Shared pieces of the contributors: activation sizes, replica groups, placement text.
#include "graph_support.hpp"

#include <fmt/format.h>

#include <cmath>

#include "stepcast/cost/memory.hpp"

namespace stepcast::graph::detail {

double activation_element_bytes(const plan::Plan& plan) {
  return cost::state_bytes_per_parameter(plan.precision, plan.optimizer).parameters;
}

Bytes activation(const GraphContext& context) {
  const plan::Plan& p = context.plan;
  // Each context-parallel rank holds s/cp tokens of every sequence.
  return Bytes(static_cast<double>(p.seq_len) / p.cp * p.micro_batch_size * context.workload.shape->hidden *
               activation_element_bytes(p));
}

std::string placement_text(const topology::Topology& topology, const GroupSpec& group) {
  const topology::CommTiers t = topology.tiers(group.ranks, group.stride, group.concurrency);
  if (t.nodes <= 1) return fmt::format("{} ranks on 1 node, intra-node fabric", group.ranks);
  return fmt::format("{} ranks over {} nodes, {} per node, NICs", group.ranks, t.nodes, t.ranks_per_node);
}

std::string with_placement(const GraphContext& context, const GroupSpec& group, std::string_view name,
                           std::string_view pass) {
  if (!context.explain) return std::string(name);
  const std::string where = placement_text(context.topology, group);
  return pass.empty() ? fmt::format("{} ({})", name, where) : fmt::format("{} ({}; {})", name, pass, where);
}

GroupSets replica_blocks(const Layout& layout, int stage, int count) {
  GroupSets groups;
  for (int first = 0; first < layout.replicas; first += count) {
    for (int t = 0; t < layout.tp; ++t) {
      std::vector<int> g;
      for (int r = first; r < first + count; ++r) g.push_back(layout.gpu(r, stage, t));
      groups.push_back(std::move(g));
    }
  }
  return groups;
}

namespace {

/// Calls per layer of one model chunk that spread `per_chunk` calls (MoE blocks) over `layers`
/// layers as evenly as whole calls allow.
std::vector<int> spread(double per_chunk, int layers) {
  std::vector<int> out(static_cast<std::size_t>(layers), 0);
  for (int l = 0; l < layers; ++l) {
    out[static_cast<std::size_t>(l)] =
        static_cast<int>(std::llround(per_chunk * (l + 1) / layers) - std::llround(per_chunk * l / layers));
  }
  return out;
}

}  // namespace

std::vector<std::vector<int>> blocks_per_layer(const StepGraph& graph, double cost::ChunkCompute::*blocks) {
  std::vector<std::vector<int>> out;
  for (const StageWork& st : graph.stages) {
    for (int c = 0; c < graph.vp; ++c) {
      out.push_back(spread(st.chunks[static_cast<std::size_t>(c)].*blocks, st.passes(c)));
    }
  }
  return out;
}

}  // namespace stepcast::graph::detail
