// The alpha-beta fit: a synthetic nccl-tests log made from known alpha and B is fitted back, and
// a real 8-GPU H100 log calibrated on even-indexed sizes predicts the odd ones within 10%.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <cmath>
#include <string>

#include "stepcast/calibrate/fit.hpp"
#include "stepcast/calibrate/measurement.hpp"
#include "stepcast/calibrate/nccl_tests_log.hpp"
#include "stepcast/calibrate/validation.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/topology/topology.hpp"

namespace fit_test {

using namespace stepcast;
using namespace stepcast::calibrate;

namespace {

std::string root(const std::string& rel) { return std::string(STEPCAST_SOURCE_DIR) + "/" + rel; }

// An all_reduce_perf log of 8 ranks on one host whose times follow the ring all-reduce of
// Thakur, Rabenseifner and Gropp (2005): t = 2(N-1) alpha + 2(N-1)/N S / B, printed as nccl-tests
// prints them (time in us with two decimals, bandwidths in GB/s).
std::string synthetic_log(double alpha_s, double bw_Bps) {
  const int n = 8;
  std::string text =
      "# Collective test starting: all_reduce_perf\n"
      "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 "
      "agg iters: 1 validation: 1 graph: 0\n";
  for (int r = 0; r < n; ++r) {
    text += fmt::format("#  Rank {:2} Group  0 Pid 1 on synth device {:2} [0x{:02x}] NVIDIA H100 80GB HBM3\n", r, r, r);
  }
  text +=
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n";
  for (double s = 1048576; s <= 1073741824; s *= 2) {
    const double t = 2.0 * (n - 1) * alpha_s + 2.0 * (n - 1) / n * s / bw_Bps;
    const double algbw = s / t / 1e9;
    const double busbw = algbw * 2.0 * (n - 1) / n;
    text += fmt::format("{:>12.0f} {:>12.0f} float sum -1 {:>8.2f} {:>7.2f} {:>7.2f} 0 {:>8.2f} {:>7.2f} {:>7.2f} 0\n",
                        s, s / 4, t * 1e6, algbw, busbw, t * 1e6, algbw, busbw);
  }
  text += "# Avg bus bandwidth    : 1.0\n";
  return text;
}

}  // namespace

TEST_SUITE("calibrate.fit") {
  TEST_CASE("a synthetic all-reduce log from alpha = 5 us and B = 150 GB/s is fitted back within 1%") {
    const double alpha = 5e-6;
    const double bw = 150e9;
    const std::vector<Measurements> m{parse_nccl_tests_log(synthetic_log(alpha, bw), "synthetic.log")};
    const topology::Topology topo = topology::load_topology(root("topologies/dgx-h100.json"), 1);
    const auto samples = select_samples(m, topo, PointFilter{}, false);
    REQUIRE(samples.size() == 11);
    const auto fits = fit_samples(samples, "synthetic.log");
    REQUIRE(fits.size() == 1);  // one line fits: no regime split
    CHECK(fits[0].alpha_field == "intra_latency");
    CHECK(fits[0].bandwidth_field == "intra_bw");
    CHECK(fits[0].alpha.value() == doctest::Approx(alpha).epsilon(0.01));
    CHECK(fits[0].bandwidth.value() == doctest::Approx(bw).epsilon(0.01));
  }

  TEST_CASE("H100 8-GPU all-reduce: calibrated on even-indexed sizes, the odd ones are predicted within 10%") {
    Measurements all = read_measurements(root("tests/data/nccl-tests/nccl-tests_5coll_H100_1node_8gpu_xxrjun.txt"));
    all.runs.resize(1);  // the all_reduce_perf run
    const std::vector<Measurements> m{all};
    const topology::Topology topo = topology::load_topology(root("topologies/dgx-h100.json"), 1);
    PointFilter filter;
    filter.min_size = Bytes(1048576);
    filter.holdout = Holdout::parse("every-other");
    const auto fitted = select_samples(m, topo, filter, false);
    const auto held = select_samples(m, topo, filter, true);
    REQUIRE(fitted.size() == 5);
    REQUIRE(held.size() == 5);
    cost::Calibration cal;
    for (const auto& f : fit_samples(fitted, "h100")) cal.collectives.push_back(f.entry);
    const Comparison before = compare(held, cost::Calibration{});
    const Comparison after = compare(held, cal);
    MESSAGE(fmt::format("held-out median |error|: {:.2f}% uncalibrated, {:.2f}% calibrated (worst {:.2f}%)",
                        before.median_abs_error_pct, after.median_abs_error_pct, after.max_abs_error_pct));
    CHECK(after.median_abs_error_pct < 10.0);
  }

  TEST_CASE("holdout spellings: every-other, sizes>=X, ranks=N, anything else is an input error") {
    CHECK(Holdout::parse("every-other").kind == Holdout::Kind::kEveryOther);
    CHECK(Holdout::parse("sizes>=1MiB").size == Bytes(1048576));
    CHECK(Holdout::parse("ranks=8").ranks == 8);
    CHECK_THROWS_AS(Holdout::parse("half"), InputError);
  }

}  // TEST_SUITE

TEST_SUITE("calibrate.fit") {
  TEST_CASE("Polaris 2-node all-reduce on alcf-polaris: 8 ranks on 2 hosts fit the inter-node tier") {
    const std::vector<Measurements> m{
        read_measurements(root("tests/data/nccl-tests/nccl-tests_allreduce_A100-40GB_polaris_2nodes_8ranks_alcf.txt"))};
    const topology::Topology topo = topology::load_topology(root("topologies/alcf-polaris.json"));
    PointFilter filter;
    filter.min_size = Bytes(1048576);
    filter.holdout = Holdout::parse("every-other");
    const auto fitted = select_samples(m, topo, filter, false);
    REQUIRE(fitted.size() == 6);  // 1 MiB, 4 MiB, ... 1 GiB: indices 18, 20, ..., 28 of 29
    const auto fits = fit_samples(fitted, "polaris");
    REQUIRE_FALSE(fits.empty());
    CHECK(fits[0].alpha_field == "inter_latency");
    cost::Calibration cal;
    for (const auto& f : fits) cal.collectives.push_back(f.entry);
    const Comparison after = compare(select_samples(m, topo, filter, true), cal);
    MESSAGE(fmt::format("Polaris held-out median |error| {:.2f}%", after.median_abs_error_pct));
  }

}  // TEST_SUITE

}  // namespace fit_test
