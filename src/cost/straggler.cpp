// Expected maximum of n step times: the order-statistic integral for normal and log-normal step
// times, and the closed form for a fixed chance of a slow GPU.
#include "stepcast/cost/straggler.hpp"

#include <fmt/format.h>
#include <cmath>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/normal_distribution.hpp"

namespace stepcast::cost {
namespace {

// The integrand vanishes beyond |x| = 12 for any n a cluster has: phi(12) ~ 1e-32 on the left, and
// on the right 1 - Phi(x)^n <= n (1 - Phi(12)) ~ 1e-27 for a million GPUs.
constexpr double kLimit = 12.0;
// Simpson's error is O(h^4 f''''); the density is smooth with width >= ~0.3 for n <= 1e6, so a step
// of 1/2000 gives errors far below the printed digits.
constexpr int kIntervals = 48000;

// integral of g(x) n phi(x) Phi(x)^(n-1) dx over [-kLimit, kLimit], composite Simpson rule
// (David and Nagaraja, "Order Statistics", eq. 2.1.1 for the density of the maximum).
template <class G>
double expected_max_of_transform(int n, G g) {
  const double h = 2.0 * kLimit / kIntervals;
  const double nn = static_cast<double>(n);
  const auto f = [&](double x) {
    return g(x) * nn * standard_normal_pdf(x) * std::pow(standard_normal_cdf(x), nn - 1.0);
  };
  double sum = f(-kLimit) + f(kLimit);
  for (int i = 1; i < kIntervals; ++i) {
    const double x = -kLimit + h * static_cast<double>(i);
    sum += (i % 2 == 1 ? 4.0 : 2.0) * f(x);
  }
  return sum * h / 3.0;
}

StragglerEstimate finish(Seconds mean, Seconds expected, int gpus, Explanation explanation) {
  StragglerEstimate out;
  out.gpus = gpus;
  out.mean_step = mean;
  out.expected_step = expected;
  out.slowdown = expected / mean;
  out.explanation = std::move(explanation);
  return out;
}

}  // namespace

double expected_max_standard_normal(int n) {
  STEPCAST_ASSERT(n >= 1, "at least one draw");
  if (n == 1) return 0.0;
  return expected_max_of_transform(n, [](double x) { return x; });
}

StragglerEstimate normal_stragglers(Seconds mean, Seconds stddev, int gpus) {
  STEPCAST_ASSERT(mean.value() > 0.0 && stddev.value() >= 0.0 && gpus >= 1, "mean > 0, stddev >= 0, gpus >= 1");
  const double e_n = expected_max_standard_normal(gpus);
  const Seconds expected = mean + stddev * e_n;
  Explanation ex;
  ex.push_back({"expected max of n normals", fmt::format("e_n = int x n phi Phi^(n-1) dx, n = {}", gpus),
                fmt::format("{:.4f}", e_n)});
  ex.push_back({"expected step",
                fmt::format("mu + sigma e_n = {} + {} x {:.4f}", format_seconds(mean), format_seconds(stddev), e_n),
                format_seconds(expected)});
  return finish(mean, expected, gpus, std::move(ex));
}

StragglerEstimate lognormal_stragglers(Seconds mean, double cv, int gpus) {
  STEPCAST_ASSERT(mean.value() > 0.0 && cv >= 0.0 && gpus >= 1, "mean > 0, cv >= 0, gpus >= 1");
  // Moments of the log-normal: mean = exp(m + s^2/2), cv^2 = exp(s^2) - 1.
  const double s2 = std::log1p(cv * cv);
  const double s = std::sqrt(s2);
  const double m = std::log(mean.value()) - s2 / 2.0;
  const double expected_s =
      gpus == 1 ? mean.value() : expected_max_of_transform(gpus, [&](double x) { return std::exp(m + s * x); });
  const Seconds expected(expected_s);
  Explanation ex;
  ex.push_back({"log-normal parameters", fmt::format("s^2 = ln(1 + cv^2) = ln(1 + {:g}^2); m = ln(mean) - s^2/2", cv),
                fmt::format("s = {:.4f}, m = {:.4f}", s, m)});
  ex.push_back(
      {"expected step", fmt::format("int exp(m + s x) n phi Phi^(n-1) dx, n = {}", gpus), format_seconds(expected)});
  return finish(mean, expected, gpus, std::move(ex));
}

StragglerEstimate slow_fraction_stragglers(Seconds mean, double slow_probability, double slow_factor, int gpus) {
  STEPCAST_ASSERT(
      mean.value() > 0.0 && slow_probability >= 0.0 && slow_probability <= 1.0 && slow_factor >= 1.0 && gpus >= 1,
      "mean > 0, 0 <= p <= 1, factor >= 1, gpus >= 1");
  const double any_slow = 1.0 - std::pow(1.0 - slow_probability, static_cast<double>(gpus));
  const Seconds expected = mean * (1.0 + (slow_factor - 1.0) * any_slow);
  Explanation ex;
  ex.push_back({"P(any GPU slow)", fmt::format("1 - (1 - p)^n = 1 - (1 - {:g})^{}", slow_probability, gpus),
                fmt::format("{:.4f}", any_slow)});
  ex.push_back({"expected step",
                fmt::format("mean x (1 + (k - 1) P) = {} x (1 + {:g} x {:.4f})", format_seconds(mean),
                            slow_factor - 1.0, any_slow),
                format_seconds(expected)});
  return finish(mean, expected, gpus, std::move(ex));
}

}  // namespace stepcast::cost
