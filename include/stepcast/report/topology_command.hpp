// `stepcast topology`: a topology file loaded, validated and summarised (the GPU and its figures,
// nodes, links per tier, and the tiers a collective over every GPU sees).
#pragma once

#include <string>

namespace stepcast::report {

struct TopologyRequest {
  std::string topology;
  int nodes = 0;
  bool nodes_given = false;  ///< --nodes given (else as the topology file says)
  bool json = false;
};

/// The summary as text or JSON; a bad file throws InputError naming the file, pointer and rule.
std::string topology_command(const TopologyRequest& request);

}  // namespace stepcast::report
