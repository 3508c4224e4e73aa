// A step graph as Chakra execution traces, one per GPU, so that a plan can be cross-checked in
// ASTRA-sim and the tools that read Chakra: each GPU's tasks in its stage's schedule order, layer
// by layer and slice by slice where calls sit inside the layers, its collectives where their
// anchors place them, its pipeline sends and receives, and the optimizer.
#pragma once

#include <filesystem>

#include "stepcast/cost/collective_model.hpp"
#include "stepcast/graph/step_graph.hpp"
#include "stepcast/report/chakra_trace.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::report {

/// The trace of GPU `gpu` of the graph's layout. Communication nodes carry the collective model's
/// time for their group (beside the groups of their kind) as their duration.
std::vector<chakra::TraceNode> chakra_trace_of(const graph::StepGraph& graph, const topology::Topology& topology,
                                               const cost::CollectiveModel& model, int gpu);

/// Writes every GPU's trace of `graph` into `directory` (chakra::write_chakra's files and rules),
/// on `threads` worker threads (0: one per core); the files do not depend on it. `with` commits
/// together with them (chakra::write_chakra).
chakra::ChakraFiles write_step_chakra(const std::filesystem::path& directory, const graph::StepGraph& graph,
                                      const topology::Topology& topology, const cost::CollectiveModel& model,
                                      int threads = 0, const std::vector<OutputContent>& with = {});

}  // namespace stepcast::report
