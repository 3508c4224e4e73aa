// `stepcast collective`: the predicted cost of one collective, or of a sweep of sizes, on a
// topology, in nccl-tests' terms (time, algbw, busbw), with the formula terms on request.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "stepcast/planner/work_estimate.hpp"

namespace stepcast::report {

struct CollectiveRequest {
  std::string op;
  std::string algorithm;
  std::string size;
  std::string sizes;
  int ranks = 0;
  bool ranks_given = false;  ///< --ranks given (else every GPU)
  std::string topology;
  int nodes = 0;
  bool nodes_given = false;       ///< --nodes given (else as the topology file says)
  int gpus = 0;                   ///< --gpus: whole nodes or part of one (0: every GPU)
  int gpus_per_domain = 0;        ///< --gpus-per-domain: GPUs used of each scale-up domain (0: all)
  std::vector<std::string> sets;  ///< --set PATH=VALUE edits of the topology file
  bool json = false;
  bool explain = false;
  std::string engine = "analytical";
  std::string calibration;
  std::string protocol;
  /// With the event engine: called with the estimated cost of simulating every size, once the
  /// ranks are known and before the first runs (a budget that may refuse it).
  std::function<void(const planner::WorkEstimate&)> approve_work;
};

/// The collective's cost as a table (a sweep: one row per size) or JSON.
std::string collective_command(const CollectiveRequest& request);

}  // namespace stepcast::report
