// Topology::tiers(): group shapes (ranks, nodes, ranks per node) and figures derived by hand from
// the links the cluster expansion lays down.
#include <doctest/doctest.h>

#include <limits>

#include "stepcast/topology/cluster.hpp"
#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace tiers_test {

using namespace stepcast;
using namespace stepcast::topology;
using stepcast::topology::test::shipped;

namespace {
constexpr double kGBps = 1e9;
constexpr double kUs = 1e-6;

// 4 nodes of 4 GPUs, one 10 GB/s NIC each, 2 nodes per leaf, leaves 2:1 oversubscribed.
ClusterSpec small_fat_tree() {
  ClusterSpec s;
  s.name = "small-fat-tree";
  s.source = "hand-made for tests";
  s.gpus_per_node = 4;
  s.intra_bandwidth_per_gpu = BytesPerSecond(100 * kGBps);
  s.intra_latency = Seconds(1 * kUs);
  s.nics_per_node = 1;
  s.nic_bandwidth = BytesPerSecond(10 * kGBps);
  s.nic_latency = Seconds(2 * kUs);
  s.nodes = 4;
  s.fabric = FabricKind::kFatTree;
  s.nodes_per_leaf = 2;
  s.oversubscription = 2.0;
  s.switch_latency = Seconds(0.5 * kUs);
  return s;
}
}  // namespace

TEST_SUITE("topology.tiers") {
  TEST_CASE("p4d 2 nodes: 16 ranks span 2 nodes of 8, 8 ranks stay in node 0") {
    const Topology t = load_topology(shipped("p4d-24xlarge.json"));
    const CommTiers all = t.tiers(16);
    CHECK(all.ranks == 16);
    CHECK(all.nodes == 2);
    CHECK(all.ranks_per_node == 8);
    const CommTiers one_node = t.tiers(8);
    CHECK(one_node.nodes == 1);
    CHECK(one_node.ranks_per_node == 8);
    CHECK(one_node.inter_latency.value() == 0.0);
    CHECK(t.tiers(1).nodes == 1);
  }

  TEST_CASE("stride 8 over 2 p4d nodes: 2 ranks, 1 per node (a data-parallel group across TP=8)") {
    const Topology t = load_topology(shipped("p4d-24xlarge.json"));
    const CommTiers c = t.tiers(2, 8);
    CHECK(c.ranks == 2);
    CHECK(c.nodes == 2);
    CHECK(c.ranks_per_node == 1);
    // GPU 0 and GPU 8 both use NIC 0 of their node: 100 Gbps = 12.5 GB/s.
    CHECK(c.gpu_nic_bw.value() == doctest::Approx(12.5 * kGBps));
    // stride 2 over 16 GPUs: ranks 0,2,...,14 -> 4 per node on 2 nodes.
    const CommTiers s2 = t.tiers(8, 2);
    CHECK(s2.nodes == 2);
    CHECK(s2.ranks_per_node == 4);
  }

  TEST_CASE("groups that straddle nodes: the one over the most nodes is described, as the slowest sets the pace") {
    // 8 GB200 NVL72 racks of 72 GPUs: 64-GPU groups tile them as 0-63 (rack 0), 64-127 (8 in
    // rack 0, 56 in rack 1), ...; 8-GPU groups (72 = 9 x 8) and 72-GPU groups never straddle.
    const Topology t = load_topology(shipped("gb200-nvl72.json"), 8 * 18);
    const CommTiers ep = t.tiers(64);
    CHECK(ep.nodes == 2);
    CHECK(ep.ranks_per_node == 56);
    CHECK(t.slowest_group_start(64, 1) == 64);
    CHECK(t.tiers(8).nodes == 1);
    CHECK(t.tiers(72).nodes == 1);
    // Stride 8: groups i, i+8, ..., i+504 for i < 8, each one GPU in 8 across all 576 GPUs: 8 racks.
    CHECK(t.tiers(64, 8).nodes == 8);
    // p4d nodes of 8: groups of 4 or 8 never straddle two nodes.
    const Topology p4d = load_topology(shipped("p4d-24xlarge.json"), 4);
    CHECK(p4d.tiers(4).nodes == 1);
    CHECK(p4d.slowest_group_start(4, 1) == 0);
  }

  TEST_CASE("an uneven group reports its busiest node") {
    const Topology t = load_topology(shipped("p4d-24xlarge.json"));
    // 12 ranks: 8 on node 0, 4 on node 1.
    const CommTiers c = t.tiers(12);
    CHECK(c.nodes == 2);
    CHECK(c.ranks_per_node == 8);
  }

  TEST_CASE("fat-tree: oversubscription applies only when the group spans more than one leaf") {
    const Topology t = make_cluster(small_fat_tree());
    CHECK(t.gpu_count() == 16);
    // Ranks 0..7 are nodes 0 and 1, both under leaf 0.
    const CommTiers same_leaf = t.tiers(8);
    CHECK(same_leaf.nodes == 2);
    CHECK(same_leaf.oversubscription == 1.0);
    // Route GPU -> NIC (no latency of its own) -> leaf (2 us) -> NIC (2 us) -> GPU: 4 us.
    CHECK(same_leaf.inter_latency.value() == doctest::Approx(4 * kUs));
    // Ranks 0..11 reach node 2 under leaf 1.
    const CommTiers two_leaves = t.tiers(12);
    CHECK(two_leaves.oversubscription == 2.0);
    // Crossing leaves adds leaf-spine and spine-leaf links: 2 + 0.5 + 0.5 + 2 = 5 us.
    CHECK(two_leaves.inter_latency.value() == doctest::Approx(5 * kUs));
    // Intra: GPU-switch-GPU, 100 GB/s, 1 + 1 us. Node: one 10 GB/s NIC.
    CHECK(two_leaves.intra_bw.value() == doctest::Approx(100 * kGBps));
    CHECK(two_leaves.intra_latency.value() == doctest::Approx(2 * kUs));
    CHECK(two_leaves.node_bw.value() == doctest::Approx(10 * kGBps));
    // 4 GPUs share the node's one NIC; one GPU alone gets all of it.
    CHECK(two_leaves.gpu_nic_bw.value() == doctest::Approx(10 * kGBps));
  }

  TEST_CASE("fat-tree: each leaf's uplink is its downlink capacity over the ratio") {
    const Topology t = make_cluster(small_fat_tree());
    // 2 nodes x 1 NIC x 10 GB/s down = 20 GB/s; / 2 = 10 GB/s up, on each of the 2 fabric links.
    int fabric_links = 0;
    for (const Link& l : t.links()) {
      if (l.tier != LinkTier::kFabric) continue;
      ++fabric_links;
      CHECK(l.bandwidth.value() == doctest::Approx(10 * kGBps));
    }
    CHECK(fabric_links == 2);
  }

  TEST_CASE("tiers() is a pure function of its arguments") {
    const Topology t = load_topology(shipped("dgx-h100.json"));
    const CommTiers a = t.tiers(32, 1);
    const CommTiers b = t.tiers(32, 1);
    CHECK(a.node_bw == b.node_bw);
    CHECK(a.inter_latency == b.inter_latency);
    CHECK(a.nodes == 4);
  }

  TEST_CASE("a group's node bandwidth is the NICs its GPUs are wired to: DGX H100 GPU i on NIC i") {
    // dgx-h100.json: 8 x 400 Gbps (50 GB/s) NICs per node, GPU i on NIC i.
    const Topology t = load_topology(shipped("dgx-h100.json"), 4);
    const CommTiers all = t.tiers(32);
    CHECK(all.nics == 8);
    CHECK(all.node_bw.value() == doctest::Approx(400 * kGBps));
    CHECK(all.group_nic_bw.value() == doctest::Approx(400 * kGBps));
    // The data-parallel group of tensor rank 0 under tp = 8: GPU 0 of each node, on NIC 0 only.
    const CommTiers dp = t.tiers(4, 8);
    CHECK(dp.nics == 1);
    CHECK(dp.node_bw.value() == doctest::Approx(50 * kGBps));
    // The 7 other tensor ranks' groups use NICs 1..7: nothing shared, each keeps its NIC.
    const CommTiers beside = t.tiers(4, 8, Concurrency{8, 1});
    CHECK(beside.node_bw.value() == doctest::Approx(50 * kGBps));
    CHECK(beside.group_nic_bw.value() == doctest::Approx(50 * kGBps));
    // tp = 4: GPUs 0 and 4 of each node, NICs 0 and 4.
    const CommTiers two = t.tiers(8, 4, Concurrency{4, 1});
    CHECK(two.nics == 2);
    CHECK(two.node_bw.value() == doctest::Approx(100 * kGBps));
  }

  TEST_CASE("p4d: GPUs 2i and 2i+1 share EFA NIC i, so concurrent groups halve it") {
    // p4d-24xlarge.json: 4 x 100 Gbps (12.5 GB/s) NICs; GPUs 2i, 2i+1 on NIC i.
    const Topology t = load_topology(shipped("p4d-24xlarge.json"), 2);
    // A whole node's group: 4 NICs, 50 GB/s, as before.
    CHECK(t.tiers(16).node_bw.value() == doctest::Approx(50 * kGBps));
    // tp = 8: the data-parallel group of GPU 0 alone gets NIC 0 (12.5 GB/s) ...
    const CommTiers alone = t.tiers(2, 8);
    CHECK(alone.nics == 1);
    CHECK(alone.node_bw.value() == doctest::Approx(12.5 * kGBps));
    // ... and half of it while the group of GPU 1 runs beside it on the same NIC.
    const CommTiers shared = t.tiers(2, 8, Concurrency{8, 1});
    CHECK(shared.group_nic_bw.value() == doctest::Approx(12.5 * kGBps));
    CHECK(shared.node_bw.value() == doctest::Approx(6.25 * kGBps));
    // tp = 2: GPUs 0, 2, 4, 6 of each node, one per NIC; the groups of GPUs 1, 3, 5, 7 share them.
    const CommTiers tp2 = t.tiers(8, 2, Concurrency{2, 1});
    CHECK(tp2.nics == 4);
    CHECK(tp2.group_nic_bw.value() == doctest::Approx(50 * kGBps));
    CHECK(tp2.node_bw.value() == doctest::Approx(25 * kGBps));
  }

  TEST_CASE("more concurrent groups never leave a group more of its NICs") {
    const Topology t = load_topology(shipped("p4d-24xlarge.json"), 4);
    double previous = std::numeric_limits<double>::infinity();
    for (int groups = 1; groups <= 8; ++groups) {
      const CommTiers c = t.tiers(4, 8, Concurrency{groups, 1});
      CHECK(c.node_bw.value() <= previous * (1.0 + 1e-12));
      CHECK(c.node_bw.value() <= c.group_nic_bw.value() * (1.0 + 1e-12));
      previous = c.node_bw.value();
    }
  }
}

}  // namespace tiers_test
