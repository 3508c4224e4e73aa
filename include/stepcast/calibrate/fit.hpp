// Fitting the alpha-beta model to measured collectives: per collective, algorithm and fabric
// tier, by least squares on relative error (Eigen), piecewise by message-size regime.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "stepcast/calibrate/measurement.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::calibrate {

/// Which points a fit leaves out, so the error can be measured on points it did not see.
struct Holdout {
  enum class Kind { kNone, kEveryOther, kSizesAtLeast, kRanks };
  Kind kind = Kind::kNone;
  Bytes size;     ///< kSizesAtLeast: points of at least this size are held out
  int ranks = 0;  ///< kRanks: runs over this many ranks are held out

  /// "every-other" (odd-indexed sizes held out), "sizes>=1MiB", "ranks=8"; InputError otherwise.
  static Holdout parse(const std::string& text);
  /// Whether point `index` of `run` is held out (not fitted).
  [[nodiscard]] bool holds_out(const MeasuredCollective& run, std::size_t index) const;
};

/// Which points take part: sizes in [min_size, max_size], and the holdout.
struct PointFilter {
  Bytes min_size;
  std::optional<Bytes> max_size;
  Holdout holdout;
};

/// One measured point ready to compare with the model: the tiers its ranks see on the topology.
struct Sample {
  cost::CollectiveOp op = cost::CollectiveOp::kAllReduce;
  cost::Algorithm algorithm = cost::Algorithm::kRing;
  Bytes size;
  Seconds measured;
  BytesPerSecond measured_busbw;
  topology::CommTiers tiers;
  std::string where;  ///< "file:line" of the row, or the file for JSON input
};

/// How many rows of one measurement file select_samples took, and why it left the others out.
struct RowUse {
  int used = 0;
  int empty = 0;          ///< 0 bytes or a zero time: launch overhead only
  int outside_sizes = 0;  ///< outside [min_size, max_size]
  int holdout = 0;        ///< on the other side of the holdout
  int single_rank = 0;    ///< in a run of one rank, which moves no data
};

/// The points of `runs` that pass `filter`, on `topology`, with `held_out` choosing the points the
/// holdout leaves out (true) or the others (false). Zero-byte points are skipped: they measure
/// launch overhead only. `algorithm` (when set) replaces each collective's default algorithm.
/// `use`, when given, receives one RowUse per entry of `runs`.
/// InputError when a run has more ranks than the topology has GPUs, or its ranks span a different
/// number of hosts than the topology places them on.
std::vector<Sample> select_samples(const std::vector<Measurements>& runs, const topology::Topology& topology,
                                   const PointFilter& filter, bool held_out,
                                   std::optional<cost::Algorithm> algorithm = std::nullopt,
                                   std::vector<RowUse>* use = nullptr);

/// What one fitted regime found, for the report.
struct RegimeFit {
  cost::CollectiveCalibration entry;
  cost::Algorithm algorithm = cost::Algorithm::kRing;
  std::string alpha_field;      ///< "intra_latency" or "inter_latency"
  std::string bandwidth_field;  ///< "intra_bw", "node_bw" or "gpu_nic_bw"
  Seconds alpha;
  BytesPerSecond bandwidth;
  std::vector<double> residual_pct;  ///< (predicted - measured) / measured of each fitted point
};

/// Options of the fit.
struct FitOptions {
  int max_regimes = 3;  ///< most size regimes per collective and tier
  int min_points_per_regime = 3;
  double split_above_pct = 5.0;  ///< a regime is split when its median error exceeds this
};

/// Fits alpha and B of the exercised tiers: time = a*alpha + b/B, where a and b are the latency
/// steps and the bytes over the bottleneck that cost::estimate_collective charges (linear in
/// (alpha, 1/B)); rows are weighted by 1/measured so relative error is minimised. InputError when
/// the points cannot determine a bandwidth.
std::vector<RegimeFit> fit_samples(const std::vector<Sample>& samples, const std::string& origin,
                                   const FitOptions& options = {});

}  // namespace stepcast::calibrate
