// Fitting NCCL's tuning model to measured collectives: per protocol, a factor on NCCL's latency
// and an efficiency on NCCL's algorithm bandwidth, by least squares on relative error (Eigen),
// each point attributed to the algorithm and protocol NCCL's tuner picks for it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stepcast/calibrate/fit.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/nccl_tuning.hpp"

namespace stepcast::calibrate {

/// One measured point for the fit: a collective NCCL tunes, its size (nccl-tests' S), the
/// measured time, and NCCL's view of the GPUs it ran on.
struct NcclSample {
  cost::CollectiveOp op = cost::CollectiveOp::kAllReduce;
  Bytes size;
  Seconds measured;
  cost::NcclSystem system;
};

/// The samples of collectives NCCL tunes (not all-to-all or send/recv) over two or more ranks,
/// with NCCL's view of their GPUs on `topology`.
std::vector<NcclSample> nccl_samples(const std::vector<Sample>& samples, const topology::Topology& topology);

/// What the fit found for one protocol.
struct NcclProtocolFit {
  cost::NcclProtocol protocol = cost::NcclProtocol::kSimple;
  cost::NcclProtocolTuning tuning;
  /// Over the points NCCL picks the protocol for under the fitted factors; none when it picks it for none.
  std::optional<cost::FitSummary> fit;
};

/// The fitted protocols (those with at least two points of different sizes), and the tuning to
/// price with: NCCL's model (1 and 1) for the protocols left unfitted.
struct NcclFit {
  std::vector<NcclProtocolFit> protocols;
  cost::NcclTuning tuning;
  int rounds = 0;  ///< attribute-then-fit rounds run: until NCCL's choices stopped changing, at most 20
};

/// Fits time = latency_factor x L + S / (bandwidth_efficiency x B), where L and B are the
/// latency and algorithm bandwidth of the candidate NCCL picks, per protocol; picks are redone
/// with the fitted factors until they stop changing (at most 20 rounds), and the round whose
/// factors give the least sum of squared relative errors over all points, each priced as NCCL
/// would pick it under them, is the result. A factor that comes out non-positive is held at 1 and
/// the other fitted alone. `protocols` is empty when no protocol has two points of different sizes.
NcclFit fit_nccl(const std::vector<NcclSample>& samples);

/// The fitted protocols as calibration entries, each with `source`.
void store_nccl_fit(const NcclFit& fit, const std::string& source, cost::Calibration& calibration);

}  // namespace stepcast::calibrate
