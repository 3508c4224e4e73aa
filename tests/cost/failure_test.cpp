// Failure model: job MTBF from node and GPU rates, Young's and Daly's intervals against the
// papers, and the goodput curve peaking at the optimal interval.
#include <doctest/doctest.h>

#include <array>
#include <cmath>

#include "stepcast/cost/failure.hpp"

namespace failure_test {

using namespace stepcast;
using namespace stepcast::cost;

namespace {
constexpr double kMinute = 60.0;
constexpr double kHour = 3600.0;
}  // namespace

TEST_SUITE("cost.failure") {
  TEST_CASE("job MTBF: n independent nodes fail n times as often, a GPU-hour rate scales with GPUs") {
    // 24 h per node over 16 nodes: 24 / 16 = 1.5 h.
    CHECK(job_mtbf_from_node_mtbf(seconds(24 * kHour), 16).value() == doctest::Approx(1.5 * kHour));
    // 1e-4 failures per GPU-hour on 1000 GPUs: 0.1 failures per hour, one every 10 h.
    CHECK(job_mtbf_from_gpu_rate(1e-4, 1000).value() == doctest::Approx(10 * kHour));
    // A 5% chance per node-hour of a spot reclaim on 4 nodes: 0.2 per hour, one every 5 h.
    CHECK(job_mtbf_from_spot_rate(0.05, 4).value() == doctest::Approx(5 * kHour));
  }

  TEST_CASE("Young 1974: tau = sqrt(2 delta M), 5 min checkpoints and a 24 h MTBF give 120 min") {
    // sqrt(2 x 300 s x 86400 s) = sqrt(51 840 000 s^2) = 7200 s exactly.
    CHECK(young_interval(seconds(5 * kMinute), seconds(24 * kHour)).value() == doctest::Approx(7200.0));
    // sqrt(2 x 10 s x 5000 s) = sqrt(100 000) = 316.23 s.
    CHECK(young_interval(seconds(10.0), seconds(5000.0)).value() == doctest::Approx(316.227766));
  }

  TEST_CASE("Daly 2006: the higher-order interval as the formula in the paper") {
    const double delta = 300.0;
    const double m = 86400.0;
    // Daly (2006): sqrt(2 delta M) [1 + (1/3) sqrt(delta / 2M) + (1/9) (delta / 2M)] - delta.
    const double x = delta / (2.0 * m);
    const double expected = std::sqrt(2.0 * delta * m) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - delta;
    CHECK(daly_interval(seconds(delta), seconds(m)).value() == doctest::Approx(expected));
    // By hand: x = 300 / 172800 = 0.0017361; sqrt(x)/3 = 0.013889; x/9 = 0.000193;
    // 7200 x 1.014082 - 300 = 7001.4 s.
    CHECK(daly_interval(seconds(delta), seconds(m)).value() == doctest::Approx(7001.4).epsilon(1e-4));
  }

  TEST_CASE("Daly 2006: the optimal intervals his Figures 3-5 quote (delta = 5 min)") {
    // M = 24 h: 117 min; M = 6 h: 57 min; M = 15 min: 9.1 min (rounded as printed in the paper).
    CHECK(daly_interval(seconds(5 * kMinute), seconds(24 * kHour)).value() / kMinute ==
          doctest::Approx(117.0).epsilon(0.005));
    CHECK(daly_interval(seconds(5 * kMinute), seconds(6 * kHour)).value() / kMinute ==
          doctest::Approx(57.0).epsilon(0.01));
    CHECK(daly_interval(seconds(5 * kMinute), seconds(15 * kMinute)).value() / kMinute ==
          doctest::Approx(9.1).epsilon(0.01));
  }

  TEST_CASE("Daly 2006: when a checkpoint takes 2M or longer the interval is M") {
    CHECK(daly_interval(seconds(200.0), seconds(100.0)).value() == doctest::Approx(100.0));
    CHECK(daly_interval(seconds(300.0), seconds(100.0)).value() == doctest::Approx(100.0));
  }

  TEST_CASE("goodput: at the optimal interval at least as high as at half and at twice it") {
    const Seconds delta = seconds(60.0);
    const Seconds restart = seconds(600.0);
    for (const double m_hours : {0.5, 3.0, 24.0, 240.0}) {
      const Seconds m = seconds(m_hours * kHour);
      const Seconds opt = daly_interval(delta, m);
      const double at_opt = expected_goodput(opt, delta, restart, m).goodput;
      CAPTURE(m_hours);
      CHECK(at_opt >= expected_goodput(opt * 0.5, delta, restart, m).goodput);
      CHECK(at_opt >= expected_goodput(opt * 2.0, delta, restart, m).goodput);
    }
  }

  TEST_CASE("goodput: without failures only the checkpoint writes are lost, tau / (tau + delta)") {
    // M = 1e12 s: e^(R/M) = 1 and M (e^((tau+delta)/M) - 1) = tau + delta, so 3600 / 4000 = 0.9.
    const GoodputBreakdown g = expected_goodput(seconds(3600.0), seconds(400.0), seconds(600.0), seconds(1e12));
    CHECK(g.goodput == doctest::Approx(0.9));
    CHECK(g.write_fraction == doctest::Approx(0.1));
    CHECK(g.rework_fraction == doctest::Approx(0.0).epsilon(1e-6));
  }

  TEST_CASE("goodput: Daly's complete model for a hand case, the fractions sum to one") {
    // tau = 3600, delta = 400, R = 600, M = 36000 s: W = 36000 e^(1/60) (e^(4000/36000) - 1)
    // = 36000 x 1.016806 x 0.117519 = 4301.8 s; goodput = 3600 / 4301.8 = 0.83686;
    // writes 400 / 4301.8 = 0.09299; failures 1 - 0.83686 - 0.09299 = 0.07015, split as
    // rework 2000 : restart 600 -> 0.05396 and 0.01619.
    const GoodputBreakdown g = expected_goodput(seconds(3600.0), seconds(400.0), seconds(600.0), seconds(36000.0));
    CHECK(g.expected_segment.value() == doctest::Approx(4301.8).epsilon(1e-4));
    CHECK(g.goodput == doctest::Approx(0.83686).epsilon(1e-4));
    CHECK(g.write_fraction == doctest::Approx(0.09299).epsilon(1e-3));
    CHECK(g.rework_fraction == doctest::Approx(0.05396).epsilon(1e-3));
    CHECK(g.restart_fraction == doctest::Approx(0.01619).epsilon(1e-3));
    CHECK(g.goodput + g.write_fraction + g.rework_fraction + g.restart_fraction == doctest::Approx(1.0));
  }

  TEST_CASE("goodput curve: one row per factor, in order") {
    const std::array factors{0.5, 1.0, 2.0};
    const auto rows = goodput_curve(seconds(1000.0), factors, seconds(10.0), seconds(60.0), seconds(50000.0));
    REQUIRE(rows.size() == 3);
    CHECK(rows[0].interval.value() == doctest::Approx(500.0));
    CHECK(rows[2].interval.value() == doctest::Approx(2000.0));
  }
}

}  // namespace failure_test
