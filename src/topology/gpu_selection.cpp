// --gpus N: how much of a cluster a plan runs on. Whole nodes set the node count; fewer GPUs than
// one node holds are the first N GPUs of one node (2 or 4 of an 8-GPU node), as a job that asks
// its scheduler for part of a node gets them. --gpus-per-domain D: the plan runs on the first D
// GPUs (whole trays) of each of N / D scale-up domains, as a job that asks Slurm for 16 of each
// NVL72 rack's 18 trays (--segment=16) gets them.
#include <fmt/format.h>

#include <string_view>

#include "stepcast/core/errors.hpp"
#include "stepcast/topology/overrides.hpp"

namespace stepcast::topology {
namespace {

// The largest whole number of trays of one domain that splits `gpus` into whole domains, for a
// count that fills no whole domains (256 on NVL72: 64); 0 when none does or a domain is one node.
int per_domain_hint(int gpus, const Topology& t) {
  if (t.domain_gpus() == t.gpus_per_tray()) return 0;
  for (int d = t.domain_gpus(); d >= t.gpus_per_tray(); d -= t.gpus_per_tray()) {
    if (gpus % d == 0 && gpus > d) return d;
  }
  return 0;
}

// The rule --gpus breaks, with the counts that keep it, for the message.
[[noreturn]] void refuse_gpus(int gpus, const Topology& t, std::string_view why) {
  const int per_node = t.gpus_per_node();
  const int hint = per_domain_hint(gpus, t);
  throw InputError(
      "--gpus", {},
      fmt::format(
          "{} GPUs on {}: {} (a plan runs on whole nodes of {} GPUs, e.g. {} or {}, or on 1 to {} GPUs of one node{})",
          gpus, t.name(), why, per_node, per_node, 2 * per_node, per_node - 1,
          hint > 0 ? fmt::format(", or on part of each NVLink domain: --gpus-per-domain {} runs {} domains of {}", hint,
                                 gpus / hint, hint)
                   : ""));
}

// --gpus-per-domain: the loader keeps the first D GPUs of each domain (and checks D); --gpus
// counts whole such domains, and --nodes the trays of the whole domains that hold them.
SelectedTopology select_per_domain(const std::filesystem::path& file, const TopologyRequest& request) {
  const int per_domain = *request.gpus_per_domain;
  Topology shape = load_topology_with_sets(file, request.nodes, request.sets, per_domain);
  if (!request.gpus) {
    const int all = shape.gpu_count();
    return {std::move(shape), all};
  }
  const int gpus = *request.gpus;
  if (gpus < 1) throw InputError("--gpus", {}, fmt::format("must be at least 1, got {}", gpus));
  if (gpus % per_domain != 0) {
    const int below = gpus / per_domain * per_domain;
    throw InputError(
        "--gpus", {},
        fmt::format("{} GPUs with --gpus-per-domain {} on {}: not a whole number of domains of {} GPUs (--gpus must "
                    "be a multiple of --gpus-per-domain, e.g. {}{})",
                    gpus, per_domain, shape.name(), per_domain, below > 0 ? fmt::format("{} or ", below) : "",
                    below + per_domain));
  }
  const int domains = gpus / per_domain;
  const int wanted_nodes = domains * shape.trays_per_node();
  if (request.nodes && *request.nodes != wanted_nodes) {
    throw InputError(
        "--gpus", {},
        fmt::format("--gpus {} with --gpus-per-domain {} and --nodes {} disagree: {} GPUs are {} domain(s) "
                    "of {} GPUs, which are {} node(s) of the file on {} ({} per domain); give one of "
                    "--gpus and --nodes",
                    gpus, per_domain, *request.nodes, gpus, domains, shape.domain_gpus(), wanted_nodes, shape.name(),
                    shape.trays_per_node()));
  }
  if (shape.node_count() == domains) return {std::move(shape), gpus};
  return {load_topology_with_sets(file, wanted_nodes, request.sets, per_domain), gpus};
}

}  // namespace

int partial_domain_gpus(int gpus, const Topology& topology) {
  if (gpus <= topology.domain_gpus() || gpus % topology.domain_gpus() == 0) return 0;
  return per_domain_hint(gpus, topology);
}

int partial_domain_alternative(int gpus, const Topology& topology) {
  const int domain = topology.domain_gpus();
  const int tray = topology.gpus_per_tray();
  if (domain == tray || gpus < 2 * domain || gpus % domain != 0) return 0;
  for (int d = domain - tray; 2 * d > domain; d -= tray) {
    if (gpus % d == 0) return d;
  }
  return 0;
}

std::vector<int> domain_placements(int gpus, const Topology& topology) {
  if (const int part = partial_domain_gpus(gpus, topology); part > 0) return {part};
  if (const int part = partial_domain_alternative(gpus, topology); part > 0) return {0, part};
  return {0};
}

SelectedTopology load_selected_topology(const std::filesystem::path& file, const TopologyRequest& request) {
  if (request.gpus_per_domain) return select_per_domain(file, request);
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
                    gpus, *request.nodes, gpus, wanted_nodes * trays, full.gpus_per_tray(), full.name()));
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
