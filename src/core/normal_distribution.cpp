#include "stepcast/core/normal_distribution.hpp"

#include <cmath>
#include <numbers>

#include "stepcast/core/errors.hpp"

namespace stepcast {

double standard_normal_pdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi); }

double standard_normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }

double standard_normal_quantile(double p) {
  STEPCAST_ASSERT(p > 0.0 && p < 1.0, "a probability strictly between 0 and 1");
  // The cdf is below 1e-300 at -37 and rounds to 1 above 9: every double p lies between.
  double lo = -40.0;
  double hi = 40.0;
  for (int i = 0; i < 200 && hi - lo > 1e-15; ++i) {
    const double mid = 0.5 * (lo + hi);
    (standard_normal_cdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace stepcast
