// Collectives as flows against the analytical model: without contention they must agree.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/sim/collective_flows.hpp"
#include "stepcast/topology/topology.hpp"
#include "star_topology.hpp"

using namespace stepcast;
using cost::Algorithm;
using cost::CollectiveOp;

namespace {

std::vector<int> first_ranks(int n) {
  std::vector<int> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

double simulated(const topology::Topology& t, CollectiveOp op, Algorithm a, double size, int n) {
  return sim::simulate_collective(t, op, a, bytes(size), first_ranks(n)).value();
}

double analytical(const topology::Topology& t, CollectiveOp op, Algorithm a, double size, int n) {
  return cost::estimate_collective(op, a, bytes(size), t.tiers(n)).time.value();
}

}  // namespace

TEST_SUITE("sim.collective_flows") {
  TEST_CASE("seed: ring all-reduce of 14e9 B over 8 GPUs on 400 Gbps takes 0.490 s") {
    // 2(N-1)/N x S / B = 2 x 7/8 x 14e9 B / 50e9 B/s = 0.49 s (seed, ideal link, no latency).
    const topology::Topology t =
        topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/flat-400gbps.json", 8);
    CHECK(simulated(t, CollectiveOp::kAllReduce, Algorithm::kRing, 14e9, 8) == doctest::Approx(0.49).epsilon(1e-9));
    // The seed's other rows: N=2 0.280 s, N=4 0.420 s, N=16 0.525 s (2(N-1)/N x 0.28 s).
    const topology::Topology t16 =
        topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/flat-400gbps.json", 16);
    CHECK(simulated(t16, CollectiveOp::kAllReduce, Algorithm::kRing, 14e9, 2) == doctest::Approx(0.28).epsilon(1e-9));
    CHECK(simulated(t16, CollectiveOp::kAllReduce, Algorithm::kRing, 14e9, 4) == doctest::Approx(0.42).epsilon(1e-9));
    CHECK(simulated(t16, CollectiveOp::kAllReduce, Algorithm::kRing, 14e9, 16) == doctest::Approx(0.525).epsilon(1e-9));
  }

  TEST_CASE("contention-free ring all-reduce equals the analytical time within 0.5%, N = 2..64, 1 MiB..14e9 B") {
    // Flat switch, 50 GB/s links with 1 us each: alpha = 2 us per step for both models.
    const topology::Topology t = sim::test::star_topology(64, gbyte_per_s(50), microseconds(1));
    const std::vector<double> sizes{1048576.0, 16.0 * 1048576.0, 256.0 * 1048576.0, 1e9, 14e9};
    for (int n = 2; n <= 64; n = n < 8 ? n + 1 : n * 2) {
      for (const double s : sizes) {
        CAPTURE(n);
        CAPTURE(s);
        const double a = analytical(t, CollectiveOp::kAllReduce, Algorithm::kRing, s, n);
        CHECK(simulated(t, CollectiveOp::kAllReduce, Algorithm::kRing, s, n) == doctest::Approx(a).epsilon(0.005));
      }
    }
  }

  TEST_CASE("ring reduce-scatter and all-gather agree with the analytical model") {
    const topology::Topology t = sim::test::star_topology(16, gbyte_per_s(25), microseconds(2));
    for (const auto op : {CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
      const double a = analytical(t, op, Algorithm::kRing, 1e9, 16);
      CHECK(simulated(t, op, Algorithm::kRing, 1e9, 16) == doctest::Approx(a).epsilon(0.005));
    }
  }

  TEST_CASE("multi-node p4d: NCCL's one channel per NIC reaches the node's 400 Gbps, as the analytical ring") {
    for (const int nodes : {2, 4}) {
      const topology::Topology t =
          topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/p4d-24xlarge.json", nodes);
      const int n = t.gpu_count();
      CAPTURE(n);
      const double a = analytical(t, CollectiveOp::kAllReduce, Algorithm::kRing, 1e9, n);
      CHECK(simulated(t, CollectiveOp::kAllReduce, Algorithm::kRing, 1e9, n) == doctest::Approx(a).epsilon(0.005));
      const double h = analytical(t, CollectiveOp::kAllReduce, Algorithm::kHierarchical, 1e9, n);
      CHECK(simulated(t, CollectiveOp::kAllReduce, Algorithm::kHierarchical, 1e9, n) ==
            doctest::Approx(h).epsilon(0.005));
    }
  }

  TEST_CASE("one rank: nothing to do, zero time") {
    const topology::Topology t = sim::test::star_topology(2, gbyte_per_s(50), microseconds(1));
    CHECK(simulated(t, CollectiveOp::kAllReduce, Algorithm::kRing, 1e9, 1) == 0.0);
  }
}
