// Topology::route(): hop lists of the expected shape, never through a third GPU, deterministic.
#include <doctest/doctest.h>

#include <vector>

#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace route_test {

using namespace stepcast;
using namespace stepcast::topology;
using stepcast::topology::test::shipped;

namespace {
// The vertices a route visits, from its source GPU to its destination GPU.
std::vector<const Vertex*> path_of(const Topology& t, int src, int dst) {
  std::vector<const Vertex*> path{&t.vertices()[t.gpus()[static_cast<std::size_t>(src)]]};
  VertexId at = t.gpus()[static_cast<std::size_t>(src)];
  for (const Hop& h : t.route(src, dst)) {
    const Link& l = t.links()[h.link];
    REQUIRE((h.forward ? l.a : l.b) == at);  // hops chain, each in its stated direction
    at = h.forward ? l.b : l.a;
    path.push_back(&t.vertices()[at]);
  }
  REQUIRE(at == t.gpus()[static_cast<std::size_t>(dst)]);
  return path;
}
}  // namespace

TEST_SUITE("topology.route") {
  TEST_CASE("p4d: an intra-node route is GPU - NVSwitch - GPU") {
    const Topology t = load_topology(shipped("p4d-24xlarge.json"));
    const auto p = path_of(t, 0, 5);
    REQUIRE(p.size() == 3);
    CHECK(p[1]->kind == VertexKind::kSwitch);
    CHECK(p[1]->node == 0);
    CHECK(p[1]->name == "n0/nvswitch");
    CHECK(t.route(3, 3).empty());
  }

  TEST_CASE("p4d: an inter-node route goes GPU - NIC - switch - NIC - GPU, through the GPU's own NIC") {
    const Topology t = load_topology(shipped("p4d-24xlarge.json"));
    // GPU 2 shares NIC 1 with GPU 3 (gpu i -> nic i*4/8); GPU 8 is node 1's GPU 0 on its NIC 0.
    const auto p = path_of(t, 2, 8);
    REQUIRE(p.size() == 5);
    CHECK(p[1]->name == "n0/nic1");
    CHECK(p[2]->name == "switch");
    CHECK(p[3]->name == "n1/nic0");
    CHECK(p[4]->name == "n1/gpu0");
    const auto hops = t.route(2, 8);
    CHECK(t.links()[hops[0].link].tier == LinkTier::kIntraNode);
    CHECK(t.links()[hops[1].link].tier == LinkTier::kNic);
    CHECK(t.links()[hops[2].link].tier == LinkTier::kNic);
    CHECK(t.links()[hops[3].link].tier == LinkTier::kIntraNode);
  }

  TEST_CASE("dgx-h100: a route between rails climbs to the spine") {
    const Topology t = load_topology(shipped("dgx-h100.json"));
    // GPU 0 (rail 0) to node 1's GPU 7 (rail 7): nic0, rail0, spine, rail7, nic7.
    const auto p = path_of(t, 0, 15);
    REQUIRE(p.size() == 7);
    CHECK(p[2]->name == "rail0");
    CHECK(p[3]->name == "spine");
    CHECK(p[4]->name == "rail7");
    // Same rail: 4 hops, no spine.
    CHECK(t.route(0, 8).size() == 4);
  }

  TEST_CASE("routes are deterministic and never pass through a third GPU") {
    const Topology t = load_topology(shipped("p5-48xlarge.json"), 4);
    for (int src = 0; src < t.gpu_count(); src += 3) {
      for (int dst = 0; dst < t.gpu_count(); dst += 5) {
        CHECK(t.route(src, dst) == t.route(src, dst));
        const auto p = path_of(t, src, dst);
        for (std::size_t i = 1; i + 1 < p.size(); ++i) CHECK(p[i]->kind != VertexKind::kGpu);
      }
    }
  }

  TEST_CASE("a 1024-node single-switch cluster routes by the shortest path (4 hops between nodes)") {
    const Topology t = load_topology(shipped("flat-400gbps.json"), 1024);
    CHECK(t.route(0, 1023).size() == 4);
    CHECK(t.route(517, 3).size() == 4);
  }
}

}  // namespace route_test
