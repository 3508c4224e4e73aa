// What the contributors share (private to graph/): the activation a message carries, the rank
// layout's groups as GPU lists, and where a group's ranks sit, for names.
#pragma once

#include <string>

#include "stepcast/graph/contributors.hpp"

namespace stepcast::graph::detail {

/// Bytes of one activation element: the training precision's storage type (2 in mixed precision).
double activation_element_bytes(const plan::Plan& plan);

/// One rank's activation of a micro-batch, s/cp x b x h elements (the S of a tensor-parallel call).
Bytes activation(const GraphContext& context);

/// "8 ranks on 1 node, intra-node fabric" or "16 ranks over 2 nodes, 8 per node, NICs".
std::string placement_text(const topology::Topology& topology, const GroupSpec& group);

/// The name, with its placement appended in parentheses when names are wanted.
std::string with_placement(const GraphContext& context, const GroupSpec& group, std::string_view name,
                           std::string_view pass = {});

/// Groups of `count` consecutive replicas (`first` = 0, count, 2 count, ...), one per tensor rank
/// and block: the context-parallel groups (count = cp) and the data-parallel ones (count = replicas).
GroupSets replica_blocks(const Layout& layout, int stage, int count);

/// The blocks of one kind (`blocks`: cost::ChunkCompute's MoE, attention or Mamba-2 count) of each
/// layer of each model chunk (index stage x vp + chunk): the chunk's blocks (the MTP modules with
/// the last chunk's) spread over its layers.
std::vector<std::vector<int>> blocks_per_layer(const StepGraph& graph, double cost::ChunkCompute::*blocks);

/// The MoE blocks of each layer of each model chunk.
inline std::vector<std::vector<int>> moe_blocks_per_layer(const StepGraph& graph) {
  return blocks_per_layer(graph, &cost::ChunkCompute::moe_blocks);
}

}  // namespace stepcast::graph::detail
