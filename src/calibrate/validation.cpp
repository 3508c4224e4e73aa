// Comparing the calibrated model with measurements, point by point.
#include "stepcast/calibrate/validation.hpp"

#include <algorithm>
#include <cmath>

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

Comparison compare(const std::vector<Sample>& samples, const cost::Calibration& calibration) {
  Comparison out;
  std::vector<double> abs_err;
  for (const Sample& s : samples) {
    const topology::CommTiers tiers = cost::apply(calibration, s.tiers, s.op, s.size);
    const cost::CollectiveCost c = cost::estimate_collective(s.op, s.algorithm, s.size, tiers);
    ComparedPoint p;
    p.sample = s;
    p.predicted = c.time;
    p.predicted_busbw = c.busbw;
    p.error_pct = (c.time.value() - s.measured.value()) / s.measured.value() * 100.0;
    abs_err.push_back(std::fabs(p.error_pct));
    out.points.push_back(std::move(p));
  }
  out.median_abs_error_pct = percentile(abs_err, 50.0);
  out.p90_abs_error_pct = percentile(abs_err, 90.0);
  out.max_abs_error_pct = percentile(abs_err, 100.0);
  return out;
}

}  // namespace stepcast::calibrate
