// Connectivity rules of a topology graph: one connected piece, and every GPU able to reach every
// other GPU without passing through a third GPU (GPUs do not forward traffic).
#pragma once

#include <optional>
#include <span>
#include <string>

#include "stepcast/topology/topology.hpp"

namespace stepcast::topology {

/// The first broken connectivity rule, as a message naming the vertices and the rule; nothing
/// when the graph is connected and every pair of GPUs has a route. Links must name valid vertices.
std::optional<std::string> find_connectivity_problem(std::span<const Vertex> vertices, std::span<const Link> links);

}  // namespace stepcast::topology
