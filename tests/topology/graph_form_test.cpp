// The explicit graph form: a hand-drawn two-node file, figures derived by hand from its links,
// and the rules the loader enforces on vertices, links and connectivity.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace graph_form_test {

using namespace stepcast;
using namespace stepcast::topology;
using stepcast::topology::test::error_of;
using stepcast::topology::test::scratch_file;

namespace {
constexpr double kGBps = 1e9;
constexpr double kUs = 1e-6;

std::filesystem::path two_nodes() {
  return std::filesystem::path(STEPCAST_SOURCE_DIR) / "tests" / "topology" / "two_nodes_pcie.json";
}

// A graph-form file around the given vertices and links.
std::string graph_file(const std::string& vertices, const std::string& links) {
  return R"({"form": "graph", "name": "t", "source": "test",
    "gpu": {"name": "x", "memory": "1 GiB", "memory_bandwidth": "1 GB/s", "sm_count": 1,
            "peak": {"fp32": "1 TFLOP/s", "tf32": "1 TFLOP/s", "bf16": "1 TFLOP/s", "fp16": "1 TFLOP/s"}, "source": "test"},
    "vertices": [)" +
         vertices + R"(], "links": [)" + links + "]}";
}
}  // namespace

TEST_SUITE("topology.graph_form") {
  TEST_CASE("two PCIe nodes: figures follow from the hand-drawn links") {
    const Topology t = load_topology(two_nodes());
    CHECK(t.gpu_count() == 4);
    CHECK(t.node_count() == 2);
    CHECK(t.gpus_per_node() == 2);
    const CommTiers c = t.tiers(4);
    CHECK(c.nodes == 2);
    CHECK(c.ranks_per_node == 2);
    // g0 - pcie0 - g1: 16 GB/s links, 1 us each.
    CHECK(c.intra_bw.value() == doctest::Approx(16 * kGBps));
    CHECK(c.intra_latency.value() == doctest::Approx(2 * kUs));
    // Only nic0 - tor leaves node 0: 100 Gbps = 12.5 GB/s.
    CHECK(c.node_bw.value() == doctest::Approx(12.5 * kGBps));
    // No GPU links to a NIC directly, so a GPU's figure is its route's bottleneck:
    // min(16, 16, 12.5, 12.5, 16, 16) GB/s.
    CHECK(c.gpu_nic_bw.value() == doctest::Approx(12.5 * kGBps));
    // g0 - pcie0 - nic0 - tor - nic1 - pcie1 - g2: 1 + 0.5 + 2 + 2 + 0.5 + 1 = 7 us.
    CHECK(c.inter_latency.value() == doctest::Approx(7 * kUs));
  }

  TEST_CASE("link tiers default from the ends: inside a node, NIC to switch") {
    const Topology t = load_topology(two_nodes());
    CHECK(t.links()[0].tier == LinkTier::kIntraNode);
    CHECK(t.links()[2].tier == LinkTier::kIntraNode);
    CHECK(t.links()[3].tier == LinkTier::kNic);
  }

  TEST_CASE("--nodes is refused for a graph-form file") {
    CHECK(error_of([] { (void)load_topology(two_nodes(), 4); }) ==
          two_nodes().string() +
              ":/form: --nodes applies to cluster-form files only; this file is in graph form, whose nodes are the "
              "\"node\" fields of /vertices");
  }

  TEST_CASE("a GPU reachable only through another GPU is refused") {
    // g0 - g1 - g2 in a line: g0 and g2 share no switch and no direct link.
    const auto path = scratch_file(
        "gpu_chain.json", graph_file(
                              R"({"name": "g0", "kind": "gpu", "node": 0}, {"name": "g1", "kind": "gpu", "node": 0},
           {"name": "g2", "kind": "gpu", "node": 0})",
                              R"({"a": "g0", "b": "g1", "bandwidth": "1 GB/s", "latency": "1 us"},
           {"a": "g1", "b": "g2", "bandwidth": "1 GB/s", "latency": "1 us"})"));
    CHECK(error_of([&] { (void)load_topology(path); }) ==
          path.string() +
              ":/links: GPU \"g0\" cannot reach GPU \"g2\" without passing through another GPU (GPUs do not "
              "forward traffic: every GPU needs a route to every other GPU through links, NICs and switches)");
  }

  TEST_CASE("GPUs joined directly by links need no switch") {
    const auto path =
        scratch_file("gpu_pair.json",
                     graph_file(R"({"name": "a", "kind": "gpu", "node": 0}, {"name": "b", "kind": "gpu", "node": 0})",
                                R"({"a": "a", "b": "b", "bandwidth": "50 GB/s", "latency": "1 us"})"));
    const Topology t = load_topology(path);
    CHECK(t.route(0, 1).size() == 1);
    CHECK(t.tiers(2).intra_bw.value() == doctest::Approx(50 * kGBps));
  }

  TEST_CASE("node indices must be numbered 0..N-1 by their GPUs") {
    const auto path = scratch_file(
        "node_gap.json",
        graph_file(
            R"({"name": "a", "kind": "gpu", "node": 0}, {"name": "b", "kind": "gpu", "node": 2}, {"name": "s", "kind": "switch"})",
            R"({"a": "a", "b": "s", "bandwidth": "1 GB/s", "latency": "1 us"}, {"a": "b", "b": "s", "bandwidth": "1 GB/s", "latency": "1 us"})"));
    CHECK(error_of([&] { (void)load_topology(path); }) ==
          path.string() +
              ":/vertices/1/node: node 1 holds no GPU, yet this GPU sits in node 2 (nodes are numbered 0..N-1 "
              "by the GPUs in them, without gaps)");
  }

  TEST_CASE("a graph states its switches' in-network reduction at the top level, checked as the cluster form's") {
    const std::string vertices = R"({"name": "g0", "kind": "gpu", "node": 0}, {"name": "g1", "kind": "gpu", "node": 1},
        {"name": "s", "kind": "switch"})";
    const std::string links = R"({"a": "g0", "b": "s", "bandwidth": "100 Gbps", "latency": "1 us"},
        {"a": "g1", "b": "s", "bandwidth": "100 Gbps", "latency": "1 us"})";
    const std::string file = graph_file(vertices, links);
    const std::string with = file.substr(0, file.size() - 1) + R"(, "collnet": {"enabled": true, "source": "test"}})";
    const auto collnet = load_topology(scratch_file("graph_collnet.json", with)).collnet();
    REQUIRE(collnet.has_value());
    CHECK(collnet->enabled);
    CHECK_FALSE(load_topology(scratch_file("graph_plain.json", file)).collnet().has_value());
    const std::string bad = file.substr(0, file.size() - 1) + R"(, "collnet": {"enabled": 1, "source": "test"}})";
    CHECK(error_of([&] {
            (void)load_topology(scratch_file("graph_collnet_bad.json", bad));
          }).ends_with("graph_collnet_bad.json:/collnet/enabled: expected true or false, got number"));
  }
}

}  // namespace graph_form_test
