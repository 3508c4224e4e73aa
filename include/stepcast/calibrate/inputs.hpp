// The inputs calibrate and validate share: measurement files and the topology they ran on.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "stepcast/calibrate/measurement.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::calibrate {

/// Reads every file (nccl-tests log or stepcast-nccl-bench JSON), in the order given.
std::vector<Measurements> read_all_measurements(const std::vector<std::filesystem::path>& files);

/// Loads the topology; without `nodes`, a cluster-form topology gets as many nodes as the largest
/// run needs (ceil(ranks / GPUs per node)), so a log of 80 ranks needs no --nodes.
topology::Topology topology_for(const std::filesystem::path& file, std::optional<int> nodes,
                                const std::vector<Measurements>& measurements);

}  // namespace stepcast::calibrate
