// Reading measurement files and sizing the topology to the runs in them.
#include "stepcast/calibrate/inputs.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"

namespace stepcast::calibrate {

std::vector<Measurements> read_all_measurements(const std::vector<std::filesystem::path>& files) {
  std::vector<Measurements> out;
  out.reserve(files.size());
  for (const auto& f : files) out.push_back(read_measurements(f));
  return out;
}

topology::Topology topology_for(const std::filesystem::path& file, std::optional<int> nodes,
                                const std::vector<Measurements>& measurements) {
  if (nodes && *nodes < 1) throw InputError("--nodes", {}, "must be at least 1");
  topology::Topology topo = topology::load_topology(file, nodes);
  if (nodes) return topo;
  int ranks = 0;
  for (const Measurements& m : measurements) {
    for (const MeasuredCollective& r : m.runs) ranks = std::max(ranks, r.ranks);
  }
  if (ranks <= topo.gpu_count()) return topo;
  const int per_node = std::max(1, topo.gpus_per_node());
  return topology::load_topology(file, (ranks + per_node - 1) / per_node);
}

}  // namespace stepcast::calibrate
