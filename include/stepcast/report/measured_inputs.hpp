// The inputs `calibrate` and `validate` share (--measured, --topology, --nodes, --algorithm,
// --min-size, --max-size, --holdout, and --op, --ranks, --gpus-per-node, --verbose for logs that
// do not say everything), and loading them into measurements, topology and filter.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stepcast/calibrate/eager_host.hpp"
#include "stepcast/calibrate/fit.hpp"
#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/calibrate/measurement.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::report {

struct MeasuredOptions {
  std::vector<std::string> measured;  ///< nccl-tests logs, nccl-bench, kernel-bench or eager-host JSON
  std::string topology;
  int nodes = 0;          ///< 0 = as many nodes as the largest run needs; else also the hosts of each run
  std::string op;         ///< the collective of runs whose log does not name it
  int ranks = 0;          ///< ranks of each run (0: from the logs)
  int gpus_per_node = 0;  ///< most ranks on one host (0: from the logs)
  bool verbose = false;   ///< list every skipped line
  std::string algorithm;
  std::string min_size;
  std::string max_size;
  std::string holdout = "none";
};

/// The measurements, the topology they ran on and which of their points take part.
struct MeasuredInputs {
  std::vector<calibrate::Measurements> measurements;  ///< collectives
  std::vector<calibrate::KernelBench> kernels;        ///< operators timed on one GPU
  std::vector<calibrate::EagerHostFile> eager_host;   ///< eager PyTorch layers' host time
  topology::Topology topology;
  calibrate::PointFilter filter;
  std::optional<cost::Algorithm> algorithm;  ///< none: each collective's default
  bool nccl_auto = false;                    ///< --algorithm auto: NCCL's tuning model picks
};

/// Reads the files and the topology and parses the filters; bad input throws InputError.
MeasuredInputs load_measured_inputs(const MeasuredOptions& options);

}  // namespace stepcast::report
