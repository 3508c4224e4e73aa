// --gpus N: how much of a cluster a plan runs on. Whole nodes set the node count; fewer GPUs than
// one node holds are the first N GPUs of one node (2 or 4 of an 8-GPU node), as a job that asks
// its scheduler for part of a node gets them.
#include <fmt/format.h>

#include <string_view>

#include "stepcast/core/errors.hpp"
#include "stepcast/topology/overrides.hpp"

namespace stepcast::topology {
namespace {

// The rule --gpus breaks, with the counts that keep it, for the message.
[[noreturn]] void refuse_gpus(int gpus, const Topology& t, std::string_view why) {
  const int per_node = t.gpus_per_node();
  throw InputError(
      "--gpus", {},
      fmt::format(
          "{} GPUs on {}: {} (a plan runs on whole nodes of {} GPUs, e.g. {} or {}, or on 1 to {} GPUs of one node)",
          gpus, t.name(), why, per_node, per_node, 2 * per_node, per_node - 1));
}

}  // namespace

SelectedTopology load_selected_topology(const std::filesystem::path& file, const TopologyRequest& request) {
  Topology full = load_topology_with_sets(file, request.nodes, request.sets);
  if (!request.gpus) {
    const int all = full.gpu_count();
    return {std::move(full), all};
  }
  const int gpus = *request.gpus;
  if (gpus < 1) throw InputError("--gpus", {}, fmt::format("must be at least 1, got {}", gpus));
  const int per_node = full.gpus_per_node();
  // A node of the graph is a whole scale-up domain (an NVL72 rack); --nodes counts the file's nodes (trays).
  const int trays = full.trays_per_node();
  const bool whole_nodes = gpus % per_node == 0;
  if (!whole_nodes && gpus > per_node)
    refuse_gpus(gpus, full, "not a whole number of nodes, and more than one node holds");
  const int wanted_nodes = whole_nodes ? gpus / per_node : 1;
  if (request.nodes && *request.nodes != wanted_nodes * trays) {
    throw InputError(
        "--gpus", {},
        fmt::format("--gpus {} and --nodes {} disagree: {} GPUs are {} node(s) of {} GPUs on {}; give one of them",
                    gpus, *request.nodes, gpus, wanted_nodes * trays, per_node / trays, full.name()));
  }
  if (full.node_count() == wanted_nodes) return {std::move(full), gpus};
  if (!is_cluster_form(file)) {
    // A graph-form file keeps its nodes: a plan may use all its GPUs or the first ones of its first node.
    if (!whole_nodes && gpus <= full.gpu_count()) return {std::move(full), gpus};
    refuse_gpus(gpus, full,
                fmt::format("this graph-form file has {} GPUs on {} nodes, and its node count cannot change",
                            full.gpu_count(), full.node_count()));
  }
  Topology resized = load_topology_with_sets(file, wanted_nodes * trays, request.sets);
  return {std::move(resized), gpus};
}

}  // namespace stepcast::topology
