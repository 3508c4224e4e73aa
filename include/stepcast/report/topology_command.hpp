// `stepcast topology`: a topology file loaded, validated and summarised (the GPU and its figures,
// nodes, links per tier, and the tiers a collective over every GPU sees).
#pragma once

#include <string>
#include <vector>

namespace stepcast::report {

struct TopologyRequest {
  std::string topology;
  int nodes = 0;
  bool nodes_given = false;       ///< --nodes given (else as the topology file says)
  int gpus = 0;                   ///< --gpus: whole nodes or part of one (0: every GPU)
  int gpus_per_domain = 0;        ///< --gpus-per-domain: GPUs used of each scale-up domain (0: all)
  std::vector<std::string> sets;  ///< --set PATH=VALUE edits of the topology file
  bool json = false;
};

/// The summary as text or JSON; a bad file throws InputError naming the file, pointer and rule.
std::string topology_command(const TopologyRequest& request);

}  // namespace stepcast::report
