// Stragglers: the expected maximum of n normal draws against closed forms and published tables,
// and the slowdown of a synchronous step under normal, log-normal and slow-GPU models.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "stepcast/cost/straggler.hpp"

namespace straggler_test {

using namespace stepcast;
using namespace stepcast::cost;

namespace {
const double kSqrtPi = std::sqrt(std::numbers::pi);
double standard_normal_cdf(double x) { return 0.5 * std::erfc(-x / std::numbers::sqrt2); }
}  // namespace

TEST_SUITE("cost.straggler") {
  TEST_CASE("expected max of n standard normals: closed forms for n = 1..5") {
    // David and Nagaraja, "Order Statistics", section 3.2 (Bose and Gupta 1959):
    // e_1 = 0, e_2 = 1/sqrt(pi), e_3 = 3/(2 sqrt(pi)), e_4 = (6 / pi^(3/2)) arctan(sqrt 2),
    // e_5 = (5 / (4 sqrt(pi))) (1 + (6/pi) arcsin(1/3)).
    CHECK(expected_max_standard_normal(1) == doctest::Approx(0.0));
    CHECK(expected_max_standard_normal(2) == doctest::Approx(1.0 / kSqrtPi).epsilon(1e-9));
    CHECK(expected_max_standard_normal(3) == doctest::Approx(3.0 / (2.0 * kSqrtPi)).epsilon(1e-9));
    CHECK(expected_max_standard_normal(4) ==
          doctest::Approx(6.0 / std::pow(std::numbers::pi, 1.5) * std::atan(std::sqrt(2.0))).epsilon(1e-9));
    CHECK(expected_max_standard_normal(5) ==
          doctest::Approx(5.0 / (4.0 * kSqrtPi) * (1.0 + 6.0 / std::numbers::pi * std::asin(1.0 / 3.0))).epsilon(1e-9));
  }

  TEST_CASE("expected max of n standard normals: Harter's (1961) table for n = 10, 100, 1000") {
    // Harter, "Expected values of normal order statistics", Biometrika 48 (1961), to 5 decimals.
    CHECK(expected_max_standard_normal(10) == doctest::Approx(1.53875).epsilon(1e-5));
    CHECK(expected_max_standard_normal(100) == doctest::Approx(2.50759).epsilon(1e-5));
    CHECK(expected_max_standard_normal(1000) == doctest::Approx(3.24144).epsilon(1e-5));
  }

  TEST_CASE("normal step times: two GPUs wait mu + sigma / sqrt(pi)") {
    const StragglerEstimate s = normal_stragglers(seconds(1.0), seconds(0.1), 2);
    CHECK(s.expected_step.value() == doctest::Approx(1.0 + 0.1 / kSqrtPi));
    CHECK(s.slowdown == doctest::Approx(1.0 + 0.1 / kSqrtPi));
    CHECK_FALSE(s.explanation.empty());
  }

  TEST_CASE("normal step times: no spread, no slowdown") {
    CHECK(normal_stragglers(seconds(2.0), seconds(0.0), 1024).slowdown == doctest::Approx(1.0));
  }

  TEST_CASE("log-normal step times: two GPUs wait 2 mean Phi(s / sqrt 2)") {
    // X = e^(m + sZ). E[max(X1, X2)] = 2 E[X1 Phi((ln X1 - m)/s)] = 2 e^m E[e^(sZ) Phi(Z)]
    // = 2 e^(m + s^2/2) E[Phi(Z + s)] (tilting Z by s) = 2 mean P(Z'' - Z' < s) = 2 mean Phi(s / sqrt 2).
    const double cv = 0.2;
    const double s = std::sqrt(std::log(1.0 + cv * cv));
    const StragglerEstimate est = lognormal_stragglers(seconds(1.5), cv, 2);
    CHECK(est.expected_step.value() ==
          doctest::Approx(2.0 * 1.5 * standard_normal_cdf(s / std::sqrt(2.0))).epsilon(1e-9));
  }

  TEST_CASE("log-normal step times: one GPU or no spread gives the mean") {
    CHECK(lognormal_stragglers(seconds(1.5), 0.3, 1).expected_step.value() == doctest::Approx(1.5));
    CHECK(lognormal_stragglers(seconds(1.5), 0.0, 64).expected_step.value() == doctest::Approx(1.5));
  }

  TEST_CASE("slow fraction: 1% of GPUs twice as slow, 100 GPUs are slow 1 - 0.99^100 = 63.4% of steps") {
    // 0.99^100 = e^(100 ln 0.99) = e^(-1.005034) = 0.366032; P = 0.633968; E = 1 + 1 x P.
    const StragglerEstimate s = slow_fraction_stragglers(seconds(1.0), 0.01, 2.0, 100);
    CHECK(s.slowdown == doctest::Approx(1.633968).epsilon(1e-6));
  }
}

}  // namespace straggler_test
