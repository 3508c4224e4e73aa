// Predicted against measured: the model's time for each measured point, the error of each, and
// the median, 90th percentile and worst absolute error.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stepcast/calibrate/fit.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::calibrate {

struct ComparedPoint {
  Sample sample;
  std::string model;  ///< what priced it: "ring", or NCCL's pick such as "nvls/Simple"
  Seconds predicted;
  BytesPerSecond predicted_busbw;
  double error_pct = 0.0;  ///< (predicted - measured) / measured x 100
  /// NCCL's model only: the predicted time's latency and bandwidth parts, and the network's
  /// latency factor and bandwidth efficiency they include (none where no network term applied),
  /// from which a fit of the terms recovers NCCL's bare figures.
  Seconds predicted_latency;
  Seconds predicted_bandwidth_time;
  std::optional<std::pair<double, double>> network_factors;
};

/// The median, 90th percentile and worst of a set of absolute errors (percent).
struct ErrorSummary {
  double median_abs_error_pct = 0.0;
  double p90_abs_error_pct = 0.0;
  double max_abs_error_pct = 0.0;

  static ErrorSummary of(const std::vector<double>& abs_errors_pct);
};

struct Comparison : ErrorSummary {
  std::vector<ComparedPoint> points;
};

/// Predicts every sample with cost::estimate_collective on the calibrated tiers and compares.
Comparison compare(const std::vector<Sample>& samples, const cost::Calibration& calibration);

/// As compare, with the collective model every command uses (cost::price_collective, the
/// calibration applied): the candidate NCCL's tuner picks, and all-to-all and send/recv on NCCL's
/// point-to-point channels.
Comparison compare_nccl(const std::vector<Sample>& samples, const topology::Topology& topology,
                        const cost::Calibration& calibration);

/// The p-th percentile (0..100) of `values` by the nearest-rank method; 0 for no values.
double percentile(std::vector<double> values, double p);

}  // namespace stepcast::calibrate
