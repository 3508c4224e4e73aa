// The inputs calibrate and validate share: measurement files and the topology they ran on.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "stepcast/calibrate/eager_host.hpp"
#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/calibrate/measurement.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::calibrate {

/// What a set of measurement files held, each kind in the order given.
struct MeasurementFiles {
  std::vector<Measurements> collectives;  ///< nccl-tests logs and stepcast-nccl-bench JSON
  std::vector<KernelBench> kernels;       ///< stepcast-kernel-bench JSON
  std::vector<EagerHostFile> eager_host;  ///< scripts/measure-eager-host JSON
};

/// Reads every file, telling the four kinds apart by their content; `facts` fill in and check
/// what the collective files say about their runs (RunFacts).
MeasurementFiles read_measurement_files(const std::vector<std::filesystem::path>& files, const RunFacts& facts = {});

/// Loads the topology; without `nodes`, a cluster-form topology gets as many nodes as the largest
/// run needs (ceil(ranks / GPUs per node)), so a log of 80 ranks needs no --nodes. A measured row
/// no machine like it could produce is refused (check_physically_possible).
topology::Topology topology_for(const std::filesystem::path& file, std::optional<int> nodes,
                                const std::vector<Measurements>& measurements);

}  // namespace stepcast::calibrate
