// `stepcast collective` priced with NCCL's tuning model (--algorithm auto, --protocol): every
// candidate of each size and NCCL's choice, as text (a sweep shows where the choice changes) or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/nccl_tuning.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::report {

/// One run of NCCL's model: the request, what NCCL sees, and the choice at each size.
struct NcclRun {
  cost::CollectiveOp op = cost::CollectiveOp::kAllReduce;
  const topology::Topology* topo = nullptr;
  topology::CommTiers tiers;
  std::string topology_path;
  cost::NcclSystem system;
  cost::NcclFilter filter;
  bool calibrated = false;  ///< protocol factors from a calibration file were applied
  bool sweep = false;
  std::vector<Bytes> sizes;
  std::vector<cost::NcclChoice> choices;  ///< one per size
  std::vector<Seconds> simulated;         ///< with --engine des: the discrete-event time per size
  /// Across nodes on a topology that names its network (and no calibration's NCCL factors): the
  /// network's terms. Empty otherwise.
  std::optional<topology::NetworkTerms> network;
  /// Per size, what every other command charges (and --engine des plays): NCCL's pick, across
  /// nodes as the network achieves it.
  std::vector<cost::CollectivePrice> achieved;
};

/// nccl-tests-style text: one size with NCCL's choice and why, or a sweep table with the sizes
/// where the choice changes; `explain` adds what NCCL sees and every candidate's terms.
std::string nccl_text(const NcclRun& run, bool explain);
/// The same as one JSON object; every size carries its candidates.
nlohmann::json nccl_json(const NcclRun& run, bool explain);

}  // namespace stepcast::report
