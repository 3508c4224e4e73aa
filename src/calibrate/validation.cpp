// Comparing the calibrated model with measurements, point by point.
#include "stepcast/calibrate/validation.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <utility>

#include "stepcast/cost/collective_model.hpp"

namespace stepcast::calibrate {

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  if (p == 50.0 && n % 2 == 0) return (values[n / 2 - 1] + values[n / 2]) / 2.0;  // the usual median
  // Nearest rank: the smallest value with at least p% of the values at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  return values[std::clamp<std::size_t>(rank, 1, n) - 1];
}

ErrorSummary ErrorSummary::of(const std::vector<double>& abs_errors_pct) {
  return {percentile(abs_errors_pct, 50.0), percentile(abs_errors_pct, 90.0), percentile(abs_errors_pct, 100.0)};
}

namespace {

ComparedPoint compared(const Sample& s, Seconds predicted, std::string model) {
  ComparedPoint p;
  p.sample = s;
  p.model = std::move(model);
  p.predicted = predicted;
  // Nothing moves over one rank: no time, and no bandwidth to speak of.
  p.predicted_busbw = predicted.value() > 0.0
                          ? BytesPerSecond(s.size.value() / predicted.value() * cost::busbw_factor(s.op, s.tiers.ranks))
                          : BytesPerSecond(0.0);
  p.error_pct = (predicted.value() - s.measured.value()) / s.measured.value() * 100.0;
  return p;
}

Seconds alpha_beta_time(const Sample& s, const cost::Calibration& calibration) {
  const topology::CommTiers tiers = cost::apply(calibration, s.tiers, s.op, s.size);
  return cost::estimate_collective(s.op, s.algorithm, s.size, tiers).time;
}

Comparison summarised(std::vector<ComparedPoint> points) {
  std::vector<double> abs_err;
  for (const auto& p : points) abs_err.push_back(std::fabs(p.error_pct));
  return Comparison{ErrorSummary::of(abs_err), std::move(points)};
}

}  // namespace

Comparison compare(const std::vector<Sample>& samples, const cost::Calibration& calibration) {
  std::vector<ComparedPoint> points;
  for (const Sample& s : samples) {
    points.push_back(compared(s, alpha_beta_time(s, calibration), std::string(cost::to_string(s.algorithm))));
  }
  return summarised(std::move(points));
}

Comparison compare_nccl(const std::vector<Sample>& samples, const topology::Topology& topology,
                        const cost::Calibration& calibration) {
  cost::CollectiveModel model;
  model.calibration = &calibration;
  std::vector<ComparedPoint> points;
  for (const Sample& s : samples) {
    const cost::CollectivePrice price =
        cost::price_collective(cost::collective_group(topology, s.tiers), s.op, s.size, model);
    ComparedPoint& p = points.emplace_back(compared(s, price.time, cost::model_name(price)));
    p.predicted_latency = price.latency;
    p.predicted_bandwidth_time = price.bandwidth_time;
    if (price.network) {
      p.network_factors = {price.network->latency_factor,
                           price.p2p ? price.network->p2p_bandwidth_efficiency : price.network->bandwidth_efficiency};
    }
  }
  return summarised(std::move(points));
}

}  // namespace stepcast::calibrate
