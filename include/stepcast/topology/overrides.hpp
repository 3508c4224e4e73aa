// What-if questions without editing a file: the command line's --set PATH=VALUE edits of a
// topology file, and --nodes/--gpus choosing how much of the cluster a plan uses.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/topology/topology.hpp"

namespace stepcast::topology {

/// How the command line changes a topology file before it is read.
struct TopologyRequest {
  std::optional<int> nodes;  ///< --nodes: the cluster's node count (cluster form)
  std::optional<int> gpus;   ///< --gpus: the GPUs the plan uses
  /// --gpus-per-domain: the GPUs the plan uses of each scale-up domain (64 of an NVL72 rack's 72)
  std::optional<int> gpus_per_domain;
  std::vector<std::string> sets;  ///< --set PATH=VALUE edits, applied in order
};

/// A topology with the GPUs a plan runs on: all of them, or the first `gpus` of its one node.
struct SelectedTopology {
  Topology topology;
  int gpus = 0;  ///< the GPUs the plan uses (the first ones): topology.gpu_count() or fewer
};

/// Loads `file` with the request applied. Each --set names a field by its dotted path
/// ("node.nics.bandwidth", "gpu.memory", "links.3.bandwidth"; a unique ending such as
/// "nics.bandwidth" is enough) and replaces its value, which is then read and checked exactly as
/// the file's own. --gpus N must be a whole number of nodes (the node count follows) or fewer than
/// one node's GPUs (one node, of which the plan uses the first N). With --gpus-per-domain D (whole
/// trays, at most one domain: load_topology) each node of the graph keeps the first D GPUs of its
/// scale-up domain and their NICs, and N must be a whole number of such domains (N / D domains;
/// without --gpus, every domain of the file). An unknown path, a value of the wrong kind or a GPU
/// count that breaks the rule throws InputError (exit 2) with the rule.
SelectedTopology load_selected_topology(const std::filesystem::path& file, const TopologyRequest& request);

/// The GPUs of each scale-up domain a run of `gpus` takes when they fill no whole number of the
/// topology's domains of several trays but whole trays of several domains do: the most such GPUs,
/// so the fewest domains (256 on NVL72 racks: 64 of each of 4); 0 for whole domains, one domain or
/// fewer, a domain of one node, or a count no whole trays split.
int partial_domain_gpus(int gpus, const Topology& topology);

/// For `gpus` that fill two or more whole scale-up domains of several trays, the other placement a
/// scheduler's segments give them: the most whole trays, more than half a domain and fewer than
/// all of it, that split them into more domains (576 on NVL72 racks: 64 of each of 9, beside 8
/// whole racks); 0 when none does.
int partial_domain_alternative(int gpus, const Topology& topology);

/// The GPUs of each scale-up domain a run of `gpus` may use, as a scheduler's segments place it (0:
/// whole domains): {partial_domain_gpus} where no whole domains hold the count, {0,
/// partial_domain_alternative} where another part of each also splits it, else {0}.
std::vector<int> domain_placements(int gpus, const Topology& topology);

/// load_topology with --set edits applied (no GPU selection).
Topology load_topology_with_sets(const std::filesystem::path& file, std::optional<int> nodes,
                                 const std::vector<std::string>& sets,
                                 std::optional<int> gpus_per_domain = std::nullopt);

/// One --set as applied to a file: the field's full dotted path, its value in the file and the
/// new one (JSON text), and the count of the block it sits in (a NIC block's "count": its figures
/// are per NIC), 0 when the block has none.
struct AppliedSet {
  std::string path;
  std::string before;
  std::string after;
  std::string given;  ///< the VALUE as the command line wrote it
  int block_count = 0;
};

/// The edits `sets` make to `file`, in order (each on the document as the edits before it left
/// it), for commands to say what changed; bad edits throw as load_topology_with_sets does.
std::vector<AppliedSet> applied_sets(const std::filesystem::path& file, const std::vector<std::string>& sets);

/// Whether `file` is in the compact cluster form, whose node count --nodes and --gpus may change.
bool is_cluster_form(const std::filesystem::path& file);

}  // namespace stepcast::topology
