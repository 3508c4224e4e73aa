// The standard normal distribution against its printed tables (Abramowitz and Stegun, Handbook of
// Mathematical Functions, Table 26.1 for the cdf, 26.5 for the percentage points).
#include <doctest/doctest.h>

#include "stepcast/core/normal_distribution.hpp"

TEST_SUITE("core.normal_distribution") {
  TEST_CASE("the cdf and density at tabulated points") {
    CHECK(stepcast::standard_normal_cdf(0.0) == doctest::Approx(0.5));
    CHECK(stepcast::standard_normal_cdf(1.0) == doctest::Approx(0.8413447461).epsilon(1e-9));
    CHECK(stepcast::standard_normal_cdf(-1.96) == doctest::Approx(0.0249978952).epsilon(1e-8));
    CHECK(stepcast::standard_normal_pdf(0.0) == doctest::Approx(0.3989422804).epsilon(1e-9));
  }

  TEST_CASE("the quantiles a 90% and a 95% interval take: 1.644854 and 1.959964") {
    CHECK(stepcast::standard_normal_quantile(0.95) == doctest::Approx(1.6448536270).epsilon(1e-9));
    CHECK(stepcast::standard_normal_quantile(0.975) == doctest::Approx(1.9599639845).epsilon(1e-9));
    CHECK(stepcast::standard_normal_quantile(0.05) == doctest::Approx(-1.6448536270).epsilon(1e-9));
    CHECK(stepcast::standard_normal_quantile(0.5) == doctest::Approx(0.0).epsilon(1e-12));
  }
}
