// Collectives as flows against the analytical model: without contention they must agree.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "star_topology.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/des/engine.hpp"
#include "stepcast/sim/collective_flows.hpp"
#include "stepcast/topology/overrides.hpp"
#include "stepcast/topology/topology.hpp"

namespace collective_flows_test {

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

  TEST_CASE("NCCL's pick as flows alone equals the analytical model within 1% on shipped machines") {
    // The flows carry the model's bytes at the model's rate; alone on idle links nothing else
    // limits them, so any gap is a link slower than NCCL's channels (a bug of the topology).
    struct Case {
      const char* file;
      int nodes;
    };
    for (const Case c : {Case{"dgx-h100.json", 1}, Case{"dgx-h100.json", 4}, Case{"p4d-24xlarge.json", 2},
                         Case{"alcf-polaris.json", 8}, Case{"p5-48xlarge.json", 2}}) {
      const topology::Topology t =
          topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/" + c.file, c.nodes);
      for (const auto op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                            CollectiveOp::kBroadcast, CollectiveOp::kAllToAll, CollectiveOp::kSendRecv}) {
        for (const double size : {65536.0, 16.0 * 1048576.0, 1073741824.0}) {
          const int n = t.gpu_count();
          const cost::CollectivePrice p =
              cost::price_collective(cost::collective_group(t, t.tiers(n)), op, bytes(size), {});
          CAPTURE(std::string(c.file));
          CAPTURE(cost::to_string(op));
          CAPTURE(size);
          const double des = sim::simulate_collective(t, op, bytes(size), p, first_ranks(n)).value();
          CHECK(des == doctest::Approx(p.time.value()).epsilon(0.01));
        }
      }
    }
  }

  TEST_CASE("CollNet and NVLS through CollNet as flows alone equal the analytical model within 1%") {
    // As above with the switches' reduction on (the DGX files' collnet block, and a test machine
    // with half the NICs): NCCL's pick and each CollNet algorithm by name, whole machines and the
    // groups of every other GPU (a NIC each on the half-NIC machine), on every collective CollNet has.
    struct Case {
      const char* file;
      int nodes;
      int stride;
    };
    const std::string root = STEPCAST_SOURCE_DIR;
    for (const Case c : {Case{"topologies/dgx-h100.json", 4, 1}, Case{"topologies/dgx-a100.json", 4, 1},
                         Case{"topologies/dgx-h100.json", 2, 2}, Case{"topologies/gb200-nvl72-4racks.json", 72, 1},
                         Case{"tests/cost/data/collnet-4nics.json", 4, 2}}) {
      const topology::Topology t =
          topology::load_topology_with_sets(root + "/" + c.file, c.nodes, {"collnet.enabled=true"});
      const int n = (t.gpu_count() - 1) / c.stride + 1;
      std::vector<int> ranks;
      for (int i = 0; i < n; ++i) ranks.push_back(i * c.stride);
      const cost::CollectiveGroup group = cost::collective_group(t, t.tiers(n, c.stride));
      for (const auto op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter}) {
        for (const auto a : {std::optional<cost::NcclAlgorithm>(), std::optional(cost::NcclAlgorithm::kCollNetDirect),
                             std::optional(cost::NcclAlgorithm::kCollNetChain)}) {
          if (a && (!cost::nccl_runs(op, *a) || std::string(c.file).find("gb200") != std::string::npos)) continue;
          for (const double size : {65536.0, 16.0 * 1048576.0, 1073741824.0}) {
            cost::CollectiveModel model;
            model.nccl.algorithm = a;
            const cost::CollectivePrice p = cost::price_collective(group, op, bytes(size), model);
            CAPTURE(std::string(c.file));
            CAPTURE(cost::to_string(op));
            CAPTURE(cost::model_name(p));
            CAPTURE(size);
            const double des = sim::simulate_collective(t, op, bytes(size), p, ranks).value();
            CHECK(des == doctest::Approx(p.time.value()).epsilon(0.01));
          }
        }
      }
    }
  }

  TEST_CASE("in-network reduction as flows: each node sends its 1 GiB once into the switches, a ring 2(n-1)/n x S") {
    // 4 DGX H100 nodes, 32 ranks, CollNet on. CollNet Direct: each of a node's 8 heads sends S / 8
    // to the switches through its NIC and takes S / 8 back, so the NICs' links to the rail
    // switches carry S out and S in per node: 4 x 2 x S = 8 S in all. The ring sends 2(N-1)/N S
    // per rank around 8 channels, each crossing 4 node boundaries: 8 x 4 x 2 links x (62/32 S) / 8
    // = 15.5 S. NVLS through CollNet sends what CollNet Direct sends.
    const topology::Topology t = topology::load_topology_with_sets(
        std::string(STEPCAST_SOURCE_DIR) + "/topologies/dgx-h100.json", 4, {"collnet.enabled=true"});
    const cost::CollectiveGroup group = cost::collective_group(t, t.tiers(32));
    const double size = 1073741824.0;
    const auto nic_bytes = [&](std::optional<cost::NcclAlgorithm> a) {
      cost::CollectiveModel model;
      model.nccl.algorithm = a;
      const cost::CollectivePrice p = cost::price_collective(group, CollectiveOp::kAllReduce, bytes(size), model);
      des::Engine engine;
      struct Done final : sim::CollectiveObserver {
        void on_collective_done(des::Tick, std::uint64_t) override {}
      } done;
      sim::CollectiveRunner runner(done);
      sim::Network network(t, engine, runner);
      runner.attach(network);
      engine.add_model(network);
      const std::vector<std::vector<int>> groups{first_ranks(32)};
      const sim::CollectiveSchedule schedule =
          sim::build_collective(network, t, CollectiveOp::kAllReduce, bytes(size), p, groups);
      runner.start(schedule, 0);
      engine.run();
      return network.traffic().bytes[static_cast<std::size_t>(topology::LinkTier::kNic)];
    };
    CHECK(nic_bytes(cost::NcclAlgorithm::kCollNetDirect) == doctest::Approx(8.0 * size));
    CHECK(nic_bytes(cost::NcclAlgorithm::kNvls) == doctest::Approx(8.0 * size));
    CHECK(nic_bytes(cost::NcclAlgorithm::kRing) == doctest::Approx(15.5 * size));
  }

  TEST_CASE("groups side by side share their NICs in both engines: p4d, tp = 8, data-parallel all-reduce") {
    // GPU 2i and 2i+1 of every node share EFA NIC i. The eight data-parallel groups (GPU j of each
    // of 4 nodes) run at once: analytically each gets half a NIC; simulated, the flows of the two
    // groups on a NIC split it. NCCL's channel is 12 GB/s of the NIC's 12.5: the engines agree
    // within 10% (4% from that rounding).
    const topology::Topology t =
        topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/p4d-24xlarge.json", 4);
    const Bytes size(256.0 * 1048576.0);
    const cost::CollectivePrice alone =
        cost::price_collective(cost::collective_group(t, t.tiers(4, 8)), CollectiveOp::kAllReduce, size, {});
    const cost::CollectivePrice shared = cost::price_collective(
        cost::collective_group(t, t.tiers(4, 8, topology::Concurrency{8, 1})), CollectiveOp::kAllReduce, size, {});
    std::vector<std::vector<int>> groups;
    for (int j = 0; j < 8; ++j) groups.push_back({j, 8 + j, 16 + j, 24 + j});
    des::Engine engine;
    struct Done final : sim::CollectiveObserver {
      des::Tick at = 0;
      void on_collective_done(des::Tick now, std::uint64_t) override { at = now; }
    } done;
    sim::CollectiveRunner runner(done);
    sim::Network network(t, engine, runner);
    runner.attach(network);
    engine.add_model(network);
    const sim::CollectiveSchedule schedule =
        sim::build_collective(network, t, CollectiveOp::kAllReduce, size, alone, groups);
    runner.start(schedule, 0);
    engine.run();
    const double des = des::to_seconds(done.at).value();
    CHECK(des == doctest::Approx(shared.time.value()).epsilon(0.10));
    CHECK(des > 1.8 * alone.bandwidth_time.value());  // the NIC really is split
  }
}

}  // namespace collective_flows_test
