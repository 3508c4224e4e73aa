// Stragglers across synchronous GPUs (issue #7 item 5): N data-parallel replicas whose step times
// are independent Normal(mu, sigma) draws finish their gradient all-reduce with the slowest, so the
// expected step is E[max of N draws] = mu + sigma e_N. The discrete-event engine, averaged over
// seeds, must agree with the closed forms and with cost::normal_stragglers.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "hand_graph.hpp"
#include "star_topology.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/straggler.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"

namespace straggler_expected_max_test {

using namespace stepcast;
using namespace stepcast::sim;

namespace {

constexpr double kMs = 1e-3;
constexpr double kBandwidth = 50e9;  // B/s per link direction
constexpr double kBucket = 1e3;      // B: a gradient sync that costs tens of nanoseconds

// A compute-only step of n replicas: forward 1 ms and backward 2 ms (mu = 3 ms), one gradient
// bucket of 1 kB all-reduced once the backward ends, no optimizer time.
graph::StepGraph replicas(int n, int pp = 1, int m = 1) {
  graph::StepGraph s = sim::test::hand_step(pp, m, plan::Schedule::k1F1B, 1, seconds(1 * kMs), seconds(2 * kMs), n);
  graph::CommNode sync =
      sim::test::hand_node("gradients", sim::test::replica_group(s, "data", n), cost::CollectiveOp::kAllReduce,
                           bytes(kBucket), graph::Anchor::kGradientReady);
  s.comm.push_back(sync);
  return s;
}

SimOptions noisy(const Perturbation& p) {
  SimOptions o;
  o.perturbation = p;
  return o;
}

// The bucket's ring all-reduce on the flat switch: every link direction carries one flow, so
// 2(n-1)/n x S / B (Patarasuk and Yuan 2009) with no latency term: 20 ns for n = 2.
double sync_s(int n) { return 2.0 * (n - 1) / n * kBucket / kBandwidth; }

}  // namespace

TEST_SUITE("sim.straggler") {
  TEST_CASE("one seed: the step is the slowest replica's compute plus the gradient sync") {
    // Each replica draws its own factor; the all-reduce cannot start before the last replica's
    // backward ends, so step = max over replicas of their compute + 20 ns (sync_s(2)).
    const topology::Topology t = sim::test::star_topology(2, BytesPerSecond(kBandwidth));
    Perturbation p;
    p.step_cv = 0.05;
    p.seed = 11;
    const StepResult r = simulate_step(t, replicas(2), noisy(p));
    REQUIRE(r.rank_compute.size() == 2);
    CHECK(r.simulated_ranks == 2);
    CHECK(r.rank_compute[0] != r.rank_compute[1]);
    const double slowest = std::max(r.rank_compute[0].value(), r.rank_compute[1].value());
    CHECK(r.step_time.value() == doctest::Approx(slowest + sync_s(2)).epsilon(1e-9));
    // The calm step is 3 ms + 20 ns; everything above it is waiting on the slower replica.
    CHECK(r.breakdown.straggler_wait.value() == doctest::Approx(slowest - 3 * kMs).epsilon(1e-6));
  }

  TEST_CASE("without step noise one rank stands for every replica") {
    const topology::Topology t = sim::test::star_topology(8, BytesPerSecond(kBandwidth));
    const StepResult r = simulate_step(t, replicas(8));
    CHECK(r.simulated_ranks == 1);
    CHECK(r.step_time.value() == doctest::Approx(3 * kMs + sync_s(8)).epsilon(1e-9));
  }

  TEST_CASE("averaged over seeds, the step is mu + sigma e_N (expected maximum of N normal draws)") {
    // mu = 3 ms, cv = 0.05, so sigma = 0.15 ms. Expected maxima of N standard normals:
    //   e_2 = 1/sqrt(pi) = 0.5642: max(X, Y) = (X + Y)/2 + |X - Y|/2, and X - Y ~ Normal(0, 2) has
    //   E|X - Y| = sqrt(2) sqrt(2/pi), so E[max] = 1/sqrt(pi)
    //   e_8 = 1.4236: half the mean range of 8 normal draws, d2 = 2.847 (Tippett 1925, Biometrika 17)
    //   e_64 = 2.3437, by integrating x n phi(x) Phi(x)^(n-1) on [-10, 10] with step 1e-4; the same
    //   integration gives A243523's e_6 = 1.26720636 (OEIS) and e_100 = 2.5076 (Harter 1961).
    // The tolerance is 0.05 sigma on the mean step. The standard deviation of the maximum is about
    // 0.83, 0.61 and 0.45 sigma for N = 2, 8, 64 (same integration), so the seeds below give a
    // Monte-Carlo standard error near 0.012 sigma, a quarter of the tolerance; the test checks it.
    struct Case {
      int n;
      double e_n;
      int seeds;
    };
    const double mu = 3 * kMs;
    const double cv = 0.05;
    const double sigma = cv * mu;
    const double tolerance = 0.05 * sigma;
    for (const Case c :
         {Case{2, 1.0 / std::sqrt(std::numbers::pi), 5000}, Case{8, 1.4236, 2500}, Case{64, 2.3437, 1500}}) {
      CAPTURE(c.n);
      const topology::Topology t = sim::test::star_topology(c.n, BytesPerSecond(kBandwidth));
      const graph::StepGraph spec = replicas(c.n);
      double sum = 0.0;
      double sum_sq = 0.0;
      for (int seed = 1; seed <= c.seeds; ++seed) {
        Perturbation p;
        p.step_cv = cv;
        p.seed = static_cast<std::uint64_t>(seed);
        const double step = simulate_step(t, spec, noisy(p)).step_time.value() - sync_s(c.n);
        sum += step;
        sum_sq += step * step;
      }
      const double mean = sum / c.seeds;
      const double standard_error = std::sqrt((sum_sq / c.seeds - mean * mean) / (c.seeds - 1));
      CHECK(standard_error < tolerance / 3.0);
      CHECK(mean == doctest::Approx(mu + sigma * c.e_n).epsilon(tolerance / mu));
      const cost::StragglerEstimate model = cost::normal_stragglers(seconds(mu), seconds(sigma), c.n);
      CHECK(mean == doctest::Approx(model.expected_step.value()).epsilon(tolerance / mu));
    }
  }

  TEST_CASE("a pipeline under step noise runs every replica's stages and waits for the slowest") {
    // pp = 2, dp = 4: eight simulated ranks; each stage's bucket waits for all four replicas, so
    // no replica's optimizer starts before the slowest replica has produced its gradients.
    const topology::Topology t = sim::test::star_topology(8, BytesPerSecond(kBandwidth));
    const graph::StepGraph s = replicas(4, 2, 4);
    Perturbation p;
    p.step_cv = 0.1;
    p.seed = 3;
    const StepResult r = simulate_step(t, s, noisy(p));
    CHECK(r.simulated_ranks == 8);
    REQUIRE(r.rank_compute.size() == 8);
    // The slowest rank's own compute (4 micro-batches of 3 ms at its factor) bounds the step.
    const double slowest = std::max_element(r.rank_compute.begin(), r.rank_compute.end(), [](Seconds a, Seconds b) {
                             return a < b;
                           })->value();
    CHECK(r.step_time.value() > slowest);
    CHECK(r.breakdown.straggler_wait.value() > 0.0);
  }

  TEST_CASE("step noise with a group across replicas: each layer's call waits for the slowest rank of its group") {
    // Two replicas in one context-parallel group (cp = 2), 2 layers, F = 1 ms and B = 2 ms per
    // micro-batch; every layer pass starts with a blocking all-gather of 1 kB (20 ns on the
    // flat switch). GPU 1 runs 1.5x slower; the step noise is negligible but makes both replicas
    // run. Per layer: rank 0 computes 0.5 ms forward and 1 ms backward, rank 1 0.75 and 1.5.
    // Forward: both start layer 0 at 0; rank 1 ends it at 0.75, when layer 1's all-gather meets,
    // so rank 0 waits 0.25; layer 1 runs to 1.5 on rank 1. Backward (layer 1 first): rank 1
    // 1.5-3.0, rank 0 1.5-2.5 and waits 0.5 for layer 0's call; rank 1 then ends at 4.5 ms, rank
    // 0 at 4.0. The calm step is 3 ms, so 1.5 ms are waiting on the straggler.
    const topology::Topology t = sim::test::star_topology(2, BytesPerSecond(kBandwidth));
    graph::StepGraph g =
        sim::test::hand_step(1, 1, plan::Schedule::k1F1B, 1, seconds(1 * kMs), seconds(2 * kMs), 2, 1, 2);
    const std::size_t cp = sim::test::replica_group(g, "context", 2, graph::Representation::kOwnReplicas);
    for (const graph::Pass pass : {graph::Pass::kForward, graph::Pass::kBackward}) {
      graph::CommNode n = sim::test::hand_node("CP all-gather", cp, cost::CollectiveOp::kAllGather, bytes(kBucket),
                                               graph::Anchor::kLayerStart);
      n.pass = pass;
      g.comm.push_back(n);
    }
    Perturbation p;
    p.slow_gpu = 1;
    p.slowdown = 1.5;
    p.step_cv = 1e-9;
    const StepResult r = simulate_step(t, g, noisy(p));
    CHECK(r.simulated_ranks == 2);
    CHECK(r.step_time.value() == doctest::Approx(4.5 * kMs).epsilon(1e-4));
    CHECK(r.breakdown.straggler_wait.value() == doctest::Approx(1.5 * kMs).epsilon(1e-3));
  }
}

}  // namespace straggler_expected_max_test
