// The flow-level network: NIC sharing inside a p4d node, latency, and re-rating on flow end.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/des/engine.hpp"
#include "stepcast/sim/network.hpp"
#include "stepcast/topology/topology.hpp"

namespace network_test {

using namespace stepcast;
using namespace stepcast::sim;

namespace {

struct Arrivals final : TransferObserver {
  std::vector<std::pair<des::Tick, std::uint64_t>> log;
  void on_transfer_done(des::Tick now, std::uint64_t tag) override { log.emplace_back(now, tag); }
};

// Two GPUs g0, g1 on one switch; g0's link 100 GB/s with 1 us latency, g1's 50 GB/s with 2 us.
topology::Topology two_gpus() {
  using topology::LinkTier;
  using topology::VertexKind;
  std::vector<topology::Vertex> v{
      {"g0", VertexKind::kGpu, 0}, {"g1", VertexKind::kGpu, 1}, {"sw", VertexKind::kSwitch, -1}};
  std::vector<topology::Link> l{{0, 2, gbyte_per_s(100), microseconds(1), LinkTier::kNic},
                                {1, 2, gbyte_per_s(50), microseconds(2), LinkTier::kNic}};
  return topology::Topology("two", "hand-drawn test graph", topology::GpuSpec{}, v, l, 1.0);
}

}  // namespace

TEST_SUITE("sim.network") {
  TEST_CASE("eight GPUs of a p4d node sending off the node get 400 Gbps / 8 = 50 Gbps each") {
    // p4d.24xlarge: GPUs 2i and 2i+1 share NIC i of 100 Gbps (12.5 GB/s); NVSwitch links are
    // 300 GB/s. With GPU k of node 0 sending 1 GB to GPU k of node 1, NIC i carries two flows,
    // so each gets 12.5/2 = 6.25 GB/s = 50 Gbps = 400/8 Gbps, and 1 GB drains in 1e9/6.25e9 =
    // 0.16 s. Arrival adds the route's latency, which the test subtracts as the pattern reports it.
    const topology::Topology topo =
        topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/p4d-24xlarge.json", 2);
    REQUIRE(topo.gpu_count() == 16);
    des::Engine engine;
    Arrivals arrivals;
    Network net(topo, engine, arrivals);
    engine.add_model(net);
    std::vector<TransferPattern> patterns;
    for (int k = 0; k < 8; ++k) {
      const std::vector<std::pair<int, int>> pair{{k, 8 + k}};
      patterns.push_back(net.pattern(pair));
    }
    for (int k = 0; k < 8; ++k)
      net.start(patterns[static_cast<std::size_t>(k)], bytes(1e9), static_cast<std::uint64_t>(k));
    engine.run();
    REQUIRE(arrivals.log.size() == 8);
    for (int k = 0; k < 8; ++k) {
      const auto& [tick, tag] = arrivals.log[static_cast<std::size_t>(k)];
      const double drain_s = des::to_seconds(tick - patterns[tag].latency).value();
      CHECK(drain_s == doctest::Approx(0.16).epsilon(1e-9));
    }
  }

  TEST_CASE("a lone transfer takes bytes / bottleneck + the route's latency") {
    // g0 -> g1: bottleneck 50 GB/s, latency 1 + 2 = 3 us; 1 MB takes 20 us + 3 us = 23 us.
    const topology::Topology topo = two_gpus();
    des::Engine engine;
    Arrivals arrivals;
    Network net(topo, engine, arrivals);
    engine.add_model(net);
    const std::vector<std::pair<int, int>> pair{{0, 1}};
    const TransferPattern p = net.pattern(pair);
    CHECK(p.latency == 3'000'000);
    net.start(p, bytes(1e6), 7);
    engine.run();
    REQUIRE(arrivals.log.size() == 1);
    CHECK(arrivals.log[0].first == 23'000'000);
    CHECK(arrivals.log[0].second == 7);
    CHECK(net.traffic().bytes[static_cast<std::size_t>(topology::LinkTier::kNic)] == doctest::Approx(2e6));
  }

  TEST_CASE("when one of two sharing flows ends, the other speeds up") {
    // Both g0 -> g1 on the 50 GB/s link: 25 GB/s each. A: 0.5 MB, B: 1.5 MB.
    // A drains at 0.5e6/25e9 = 20 us; B then has 1.0 MB left at 50 GB/s: 20 us more, drains at
    // 40 us. Plus 3 us latency: A at 23 us, B at 43 us.
    const topology::Topology topo = two_gpus();
    des::Engine engine;
    Arrivals arrivals;
    Network net(topo, engine, arrivals);
    engine.add_model(net);
    const std::vector<std::pair<int, int>> pair{{0, 1}};
    const TransferPattern p = net.pattern(pair);
    net.start(p, bytes(0.5e6), 1);
    net.start(p, bytes(1.5e6), 2);
    engine.run();
    REQUIRE(arrivals.log.size() == 2);
    CHECK(arrivals.log[0] == std::pair<des::Tick, std::uint64_t>{23'000'000, 1});
    CHECK(arrivals.log[1] == std::pair<des::Tick, std::uint64_t>{43'000'000, 2});
  }
}

}  // namespace network_test
