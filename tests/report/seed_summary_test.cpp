// The spread of a simulated step over seeds: mean and nearest-rank percentiles, derived by hand.
#include <doctest/doctest.h>

#include <vector>

#include "stepcast/report/seed_summary.hpp"

namespace seed_summary_test {

using stepcast::Seconds;
using stepcast::report::summarize_seeds;

TEST_SUITE("report.seed_summary") {
  TEST_CASE("ten step times 1..10 s: mean 5.5, p50 the 5th smallest, p90 the 9th") {
    // Given out of order; the seeds' order is kept. Nearest rank: ceil(0.5 x 10) = 5 -> 5 s,
    // ceil(0.9 x 10) = 9 -> 9 s; mean = 55 / 10 = 5.5 s.
    std::vector<Seconds> t;
    for (double v : {7.0, 1.0, 10.0, 3.0, 5.0, 2.0, 9.0, 4.0, 8.0, 6.0}) t.push_back(Seconds(v));
    const auto s = summarize_seeds(11, t);
    CHECK(s.first_seed == 11);
    CHECK(s.step_times.front().value() == 7.0);
    CHECK(s.mean.value() == doctest::Approx(5.5));
    CHECK(s.p50.value() == 5.0);
    CHECK(s.p90.value() == 9.0);
    CHECK(s.max.value() == 10.0);
  }

  TEST_CASE("one seed: every figure is that seed's step time") {
    const auto s = summarize_seeds(1, {Seconds(2.5)});
    CHECK(s.mean.value() == 2.5);
    CHECK(s.p50.value() == 2.5);
    CHECK(s.p90.value() == 2.5);
    CHECK(s.max.value() == 2.5);
  }

  TEST_CASE("three seeds: p90 is the largest (ceil(2.7) = 3rd), p50 the 2nd") {
    const auto s = summarize_seeds(1, {Seconds(3.0), Seconds(1.0), Seconds(2.0)});
    CHECK(s.p50.value() == 2.0);
    CHECK(s.p90.value() == 3.0);
  }
}

}  // namespace seed_summary_test
