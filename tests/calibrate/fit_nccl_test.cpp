// NCCL's tuning model against measurements: points made from known per-protocol factors are
// fitted back within 1%; the uncalibrated model's error on public nccl-tests logs is bounded and
// printed; a fit on a log lowers it; the fitted factors survive a calibration file round trip.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "stepcast/calibrate/fit.hpp"
#include "stepcast/calibrate/fit_nccl.hpp"
#include "stepcast/calibrate/measurement.hpp"
#include "stepcast/calibrate/validation.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/cost/collective_model.hpp"
#include "stepcast/topology/topology.hpp"

namespace fit_nccl_test {

using namespace stepcast;
using namespace stepcast::calibrate;
using cost::NcclProtocol;

namespace {

std::string root(const std::string& rel) { return std::string(STEPCAST_SOURCE_DIR) + "/" + rel; }

cost::NcclSystem system_of(const char* file, int nodes) {
  const topology::Topology topo = topology::load_topology(root(std::string("topologies/") + file), nodes);
  return cost::nccl_system(topo, topo.tiers(topo.gpu_count()));
}

// Points priced by the model with `truth`, for sizes 8 B to 4 GiB by 2.
std::vector<NcclSample> synthetic(const cost::NcclSystem& system, const cost::NcclTuning& truth,
                                  std::initializer_list<cost::CollectiveOp> ops) {
  std::vector<NcclSample> out;
  for (const cost::CollectiveOp op : ops) {
    for (double s = 8; s <= 4294967296.0; s *= 2) {
      const Bytes size(s);
      out.push_back({op, size, cost::nccl_choose(op, size, system, {}, truth).chosen().time, system});
    }
  }
  return out;
}

const NcclProtocolFit* fitted(const NcclFit& fit, NcclProtocol p) {
  for (const NcclProtocolFit& f : fit.protocols) {
    if (f.protocol == p) return &f;
  }
  return nullptr;
}

void check_recovered(const NcclFit& fit, const cost::NcclTuning& truth, std::initializer_list<NcclProtocol> protocols) {
  for (const NcclProtocol p : protocols) {
    CAPTURE(cost::to_string(p));
    const NcclProtocolFit* f = fitted(fit, p);
    REQUIRE(f != nullptr);
    const cost::NcclProtocolTuning& want = truth[static_cast<std::size_t>(p)];
    CHECK(f->tuning.latency_factor == doctest::Approx(want.latency_factor).epsilon(0.01));
    CHECK(f->tuning.bandwidth_efficiency == doctest::Approx(want.bandwidth_efficiency).epsilon(0.01));
  }
}

// The model's relative error (%) at each point of a log: (predicted - measured) / measured.
struct LogError {
  std::vector<double> abs_pct;
  std::vector<double> size_bytes;
};

LogError model_error(const std::vector<NcclSample>& samples, const cost::NcclTuning& tuning) {
  LogError e;
  for (const NcclSample& s : samples) {
    const double predicted = cost::nccl_choose(s.op, s.size, s.system, {}, tuning).chosen().time.value();
    e.abs_pct.push_back(std::fabs(predicted - s.measured.value()) / s.measured.value() * 100.0);
    e.size_bytes.push_back(s.size.value());
  }
  return e;
}

std::vector<NcclSample> log_samples(const char* log, const char* topology_file, int nodes) {
  const topology::Topology topo = topology::load_topology(root(std::string("topologies/") + topology_file), nodes);
  const std::vector<Measurements> m{read_measurements(root(std::string("tests/data/nccl-tests/") + log))};
  return nccl_samples(select_samples(m, topo, PointFilter{}, false), topo);
}

}  // namespace

TEST_SUITE("calibrate.fit_nccl") {
  TEST_CASE("points from known factors on a DGX H100 node are fitted back within 1%") {
    // LL x1.3 latency, 0.8 bandwidth; LL128 x1.1, 0.9; Simple x1.5, 0.85. All-reduce runs ring/LL
    // then NVLS/Simple; all-gather ring/LL, ring/LL128, ring/Simple: every protocol has points.
    cost::NcclTuning truth;
    truth[0] = {1.3, 0.8};
    truth[1] = {1.1, 0.9};
    truth[2] = {1.5, 0.85};
    const auto samples = synthetic(system_of("dgx-h100.json", 1), truth,
                                   {cost::CollectiveOp::kAllReduce, cost::CollectiveOp::kAllGather});
    const NcclFit fit = fit_nccl(samples);
    check_recovered(fit, truth, {NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple});
    for (const NcclProtocolFit& f : fit.protocols) {
      REQUIRE(f.fit.has_value());
      CHECK(f.fit->max_abs_error_pct < 1.0);
    }
  }

  TEST_CASE("points from known factors on 2 x p4d (tree and ring) are fitted back within 1%") {
    cost::NcclTuning truth;
    truth[0] = {0.7, 1.0};
    truth[1] = {1.2, 0.75};
    truth[2] = {1.25, 0.9};
    const NcclFit fit = fit_nccl(synthetic(system_of("p4d-24xlarge.json", 2), truth, {cost::CollectiveOp::kAllReduce}));
    check_recovered(fit, truth, {NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple});
  }

  TEST_CASE("uncalibrated model on the H100 8-GPU log (32 MiB to 16 GiB): median error within 10%") {
    // NCCL 2.29.2 ran the log; the model restates 2.29's. The bound: at 1 GiB the hand-derived
    // NVLS time is 0.7% below the measurement (tests/golden/collective-auto-explain.expected), and
    // the largest gaps are at 32-64 MiB where the measured busbw still climbs (321 -> 415 GB/s)
    // while the model's NVLS bandwidth is flat; 10% leaves room for both without hiding a
    // regression of the model's tables.
    const auto samples = log_samples("nccl-tests_5coll_H100_1node_8gpu_xxrjun.txt", "dgx-h100.json", 1);
    REQUIRE(samples.size() == 30);  // all-reduce, all-gather, reduce-scatter; 10 sizes each
    const LogError e = model_error(samples, {});
    const double median = percentile(e.abs_pct, 50.0);
    const double worst = percentile(e.abs_pct, 100.0);
    std::printf("NCCL model vs H100 8-GPU log (30 points >= 32 MiB): median |error| %.1f%%, worst %.1f%%\n", median,
                worst);
    CHECK(median < 10.0);
    // A fit on the log itself lowers the median error.
    const NcclFit fit = fit_nccl(samples);
    const double fitted_median = percentile(model_error(samples, fit.tuning).abs_pct, 50.0);
    std::printf("  after fitting NCCL's protocol factors to it: median |error| %.1f%%\n", fitted_median);
    CHECK(fitted_median < median);
  }

  TEST_CASE(
      "uncalibrated model on the Polaris 2-node A100 all-reduce log: latency-bound up to 64 KiB, within a factor of "
      "3") {
    // Sizes up to 64 KiB take 32-79 us on Polaris (Slingshot through the libfabric plugin); the
    // model prices them with NCCL's latency tables, which NVIDIA measured on InfiniBand: tree/LL
    // at 2 nodes x 4 GPUs is 6.8 + 2 x ((4-1) x 0.6 + log2(2) x 5.0) = 20.4 us plus a little
    // bandwidth time, so the model is fast by a median factor of about 1.8 here (printed). The
    // bounds, a median factor under 2 and every point under 3, say how far NCCL's own table is
    // from this network; `stepcast calibrate` fits the factor away.
    const auto samples =
        log_samples("nccl-tests_allreduce_A100-40GB_polaris_2nodes_8ranks_alcf.txt", "alcf-polaris.json", 2);
    std::vector<double> ratios;
    for (const NcclSample& s : samples) {
      if (s.size.value() > 65536.0) continue;
      const cost::NcclCandidate c = cost::nccl_choose(s.op, s.size, s.system).chosen();
      CHECK(c.latency > c.bandwidth_time);  // latency-dominated
      ratios.push_back(std::max(c.time, s.measured) / std::min(c.time, s.measured));
    }
    REQUIRE(ratios.size() == 15);
    const double median = percentile(ratios, 50.0);
    const double worst = percentile(ratios, 100.0);
    std::printf("NCCL model vs Polaris 2x4 A100 all-reduce, 4 B..64 KiB: median factor %.2f, worst %.2f\n", median,
                worst);
    CHECK(median < 2.0);
    CHECK(worst < 3.0);
  }

  TEST_CASE("on the Polaris 2-node all-reduce log the fit keeps its best round and reports what it prices") {
    // The log's 1 ms floor from 2 to 16 MiB moves points between protocols from round to round
    // without settling (20 rounds). The kept factors must price the log no worse than the first
    // round's (each protocol fitted to the points NCCL's own model picks it for), and the points
    // reported per protocol are those NCCL picks it for under the kept factors, as validate
    // --calibration shows them (not those of the round before): they add up to the log's 29.
    const auto samples =
        log_samples("nccl-tests_allreduce_A100-40GB_polaris_2nodes_8ranks_alcf.txt", "alcf-polaris.json", 2);
    REQUIRE(samples.size() == 29);
    const NcclFit fit = fit_nccl(samples);
    const auto sum_sq = [&](const cost::NcclTuning& t) {
      double sum = 0.0;
      for (const NcclSample& sample : samples) {
        const double predicted = cost::nccl_pick(sample.op, sample.size, sample.system, {}, t).time.value();
        sum += std::pow((predicted - sample.measured.value()) / sample.measured.value(), 2);
      }
      return sum;
    };
    // The first round by hand: each protocol's latency factor a and 1 / efficiency b by least
    // squares over the points NCCL's own model picks it for, minimising sum((a L + b S/B) / t - 1)^2:
    // the 2 x 2 normal equations [sum x^2, sum x y; sum x y, sum y^2] (a, b) = (sum x, sum y) with
    // x = L / t and y = (S/B) / t.
    cost::NcclTuning first;
    for (std::size_t p = 0; p < cost::kNcclProtocols; ++p) {
      double xx = 0, xy = 0, yy = 0, x1 = 0, y1 = 0;
      for (const NcclSample& sample : samples) {
        const cost::NcclCandidate c = cost::nccl_pick(sample.op, sample.size, sample.system);
        if (static_cast<std::size_t>(c.protocol) != p) continue;
        const double x = c.latency.value() / sample.measured.value();
        const double y = c.bandwidth_time.value() / sample.measured.value();
        xx += x * x, xy += x * y, yy += y * y, x1 += x, y1 += y;
      }
      const double det = xx * yy - xy * xy;
      if (det <= 0.0) continue;
      const double a = (x1 * yy - y1 * xy) / det;
      const double b = (y1 * xx - x1 * xy) / det;
      // Both positive on this log, so these are the fit's own first-round factors (no fallback).
      REQUIRE(a > 0.0);
      REQUIRE(b > 0.0);
      first[p] = {a, 1.0 / b};
    }
    CHECK(sum_sq(fit.tuning) <= sum_sq(first));
    int points = 0;
    for (const NcclProtocolFit& f : fit.protocols) {
      CAPTURE(cost::to_string(f.protocol));
      int picked = 0;
      for (const NcclSample& sample : samples) {
        picked += cost::nccl_pick(sample.op, sample.size, sample.system, {}, fit.tuning).protocol == f.protocol;
      }
      CHECK((f.fit ? f.fit->points : 0) == picked);
      points += picked;
    }
    CHECK(points == 29);
    // A protocol NCCL picks for no point keeps its factors in the file, without a fit summary.
    cost::Calibration c;
    c.source = "test";
    store_nccl_fit(fit, "fitted to the Polaris log", c);
    const cost::Calibration back = cost::parse_calibration(cost::to_json_text(c), "round-trip.json");
    CHECK(back.nccl_protocols.size() == fit.protocols.size());
  }

  TEST_CASE("fitted factors survive a calibration file round trip") {
    NcclFit fit;
    fit.protocols.push_back({NcclProtocol::kLL128, {1.25, 0.875}, cost::FitSummary{12, 1.5, 3.25}});
    cost::Calibration c;
    c.source = "test";
    store_nccl_fit(fit, "fitted to test.log", c);
    const cost::Calibration back = cost::parse_calibration(cost::to_json_text(c), "round-trip.json");
    const cost::NcclTuning t = cost::nccl_tuning(back);
    CHECK(t[1].latency_factor == 1.25);
    CHECK(t[1].bandwidth_efficiency == 0.875);
    CHECK(t[0].latency_factor == 1.0);
    CHECK(back.nccl_protocols.at(NcclProtocol::kLL128).source == "fitted to test.log");
    CHECK(back.nccl_protocols.at(NcclProtocol::kLL128).fit->points == 12);
  }

  TEST_CASE("the fitted range round-trips, and outside it a collective is an extrapolation") {
    // Fitted on the H100 8-GPU log's sizes: 32 MiB to 16 GiB, 8 ranks on 1 node.
    cost::Calibration c;
    c.source = "test";
    c.range = cost::FittedRange{Bytes(33554432.0), Bytes(17179869184.0), 8, 8, 1, 1};
    const cost::Calibration back = cost::parse_calibration(cost::to_json_text(c), "round-trip.json");
    REQUIRE(back.range.has_value());
    CHECK(back.range->min_size.value() == 33554432.0);
    CHECK(back.range->max_ranks == 8);
    CHECK(cost::within_fitted_range(back, Bytes(1073741824.0), 8, 1));
    CHECK_FALSE(cost::within_fitted_range(back, Bytes(26214400.0), 8, 1));     // 25 MiB: below
    CHECK_FALSE(cost::within_fitted_range(back, Bytes(1073741824.0), 16, 2));  // more ranks and nodes
    CHECK(cost::to_string(*back.range) == "sizes 32.00 MiB to 16.00 GiB, 8 ranks, 1 node");
    cost::Calibration none;
    CHECK(cost::within_fitted_range(none, Bytes(1.0), 1024, 128));  // no range recorded: no warning
  }

  TEST_CASE("a collective model priced with the calibration marks what lies outside its range") {
    const topology::Topology topo =
        topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/dgx-h100.json", 2);
    cost::Calibration c;
    c.source = "test";
    c.nccl_protocols[NcclProtocol::kSimple] = cost::CalibratedNcclProtocol{{1.1, 0.9}, std::nullopt, "test"};
    c.range = cost::FittedRange{Bytes(33554432.0), Bytes(17179869184.0), 8, 8, 1, 1};
    cost::CollectiveModel model;
    model.calibration = &c;
    const auto inside = cost::price_collective(cost::collective_group(topo, topo.tiers(8)),
                                               cost::CollectiveOp::kAllReduce, Bytes(1073741824.0), model);
    CHECK_FALSE(inside.outside_calibration);
    const auto outside = cost::price_collective(cost::collective_group(topo, topo.tiers(16)),
                                                cost::CollectiveOp::kAllReduce, Bytes(1073741824.0), model);
    CHECK(outside.outside_calibration);
  }
}

}  // namespace fit_nccl_test
