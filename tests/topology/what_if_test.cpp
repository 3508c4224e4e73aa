// What-if without editing files: --set edits of a topology, --gpus choosing whole nodes or part of
// one, and the price of a GPU-hour a file states. Expected figures come from the files' cited
// hardware (p4d: 4 EFA NICs per node) and AWS's list price, worked by hand below.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "stepcast/topology/overrides.hpp"
#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace what_if_test {

using namespace stepcast;
using namespace stepcast::topology;
using stepcast::topology::test::error_of;
using stepcast::topology::test::shipped;

namespace {
constexpr double kGBps = 1e9;

TopologyRequest sets(std::vector<std::string> edits) {
  TopologyRequest r;
  r.sets = std::move(edits);
  return r;
}

TopologyRequest gpus(int n) {
  TopologyRequest r;
  r.gpus = n;
  return r;
}
}  // namespace

TEST_SUITE("topology.what_if") {
  TEST_CASE(
      "--set nics.bandwidth=\"200 Gbps\" on p4d: a node sends 4 x 200 Gbps = 100 GB/s instead of 4 x 100 Gbps = 50 "
      "GB/s") {
    // p4d.24xlarge: 4 EFA NICs per node (AWS: 400 Gbps per instance). A group holding every GPU of
    // both nodes sends through all four NICs of a node.
    const Topology file = load_topology(shipped("p4d-24xlarge.json"));
    CHECK(file.tiers(16).node_bw.value() == doctest::Approx(50 * kGBps));
    const SelectedTopology edited =
        load_selected_topology(shipped("p4d-24xlarge.json"), sets({"nics.bandwidth=200 Gbps"}));
    CHECK(edited.topology.tiers(16).node_bw.value() == doctest::Approx(100 * kGBps));
    // The full path says the same; the other figures stay the file's (NVLink 300 GB/s per GPU).
    const Topology full =
        load_topology_with_sets(shipped("p4d-24xlarge.json"), std::nullopt, {"node.nics.bandwidth=200 Gbps"});
    CHECK(full.tiers(16).node_bw.value() == doctest::Approx(100 * kGBps));
    CHECK(full.tiers(8).intra_bw.value() == doctest::Approx(300 * kGBps));
  }

  TEST_CASE("--set of a number field takes a number: nodes=4 is 32 GPUs, edits apply in order") {
    CHECK(load_topology_with_sets(shipped("p4d-24xlarge.json"), std::nullopt, {"nodes=4"}).gpu_count() == 32);
    CHECK(load_topology_with_sets(shipped("p4d-24xlarge.json"), std::nullopt, {"nodes=4", "nodes=3"}).gpu_count() ==
          24);
    // --nodes still wins over the file's count, edited or not.
    CHECK(load_topology_with_sets(shipped("p4d-24xlarge.json"), 1, {"nodes=4"}).gpu_count() == 8);
  }

  TEST_CASE(
      "--set refuses an unknown path with the nearest one, an ambiguous one with its matches, a wrong kind of value") {
    CHECK(error_of([] {
            (void)load_topology_with_sets(shipped("p4d-24xlarge.json"), std::nullopt, {"nics.bandwith=200 Gbps"});
          }) == "--set: " + shipped("p4d-24xlarge.json").string() +
                    " has no field \"nics.bandwith\"; did you mean \"nics.bandwidth\"? (a path names an existing field "
                    "with dots, e.g. "
                    "node.nics.bandwidth or gpu.memory; stepcast topology --json shows the figures)");
    CHECK(error_of([] {
            (void)load_topology_with_sets(shipped("p4d-24xlarge.json"), std::nullopt, {"latency=1 us"});
          }) == "--set: \"latency\" names 2 fields of " + shipped("p4d-24xlarge.json").string() +
                    " (node.intra.latency, node.nics.latency): give the full path");
    CHECK(error_of([] { (void)load_topology_with_sets(shipped("p4d-24xlarge.json"), std::nullopt, {"nodes=four"}); }) ==
          "--set: nodes=four: the field holds a whole number, got \"four\"");
    CHECK(error_of([] { (void)load_topology_with_sets(shipped("p4d-24xlarge.json"), std::nullopt, {"nodes"}); }) ==
          "--set: expected PATH=VALUE, e.g. node.nics.bandwidth=\"200 Gbps\", got \"nodes\"");
  }

  TEST_CASE("an edited value passes the file's own checks, and the error names the edit") {
    const std::string e = error_of(
        [] { (void)load_topology_with_sets(shipped("p4d-24xlarge.json"), std::nullopt, {"gpu.memory=1e30 B"}); });
    CHECK(e.find("with --set gpu.memory=1e30 B:/gpu/memory:") != std::string::npos);
    CHECK(e.find("1 GiB to 16 TiB") != std::string::npos);
    const std::string unit = error_of(
        [] { (void)load_topology_with_sets(shipped("p4d-24xlarge.json"), std::nullopt, {"nics.bandwidth=200"}); });
    CHECK(unit.find(":/node/nics/bandwidth:") != std::string::npos);
  }

  TEST_CASE("--gpus: whole nodes set the node count, fewer than a node are the first GPUs of one node") {
    const SelectedTopology sixteen = load_selected_topology(shipped("p4d-24xlarge.json"), gpus(16));
    CHECK(sixteen.topology.node_count() == 2);
    CHECK(sixteen.gpus == 16);
    const SelectedTopology thirty_two = load_selected_topology(shipped("p4d-24xlarge.json"), gpus(32));
    CHECK(thirty_two.topology.node_count() == 4);
    for (const int part : {1, 2, 4}) {
      const SelectedTopology s = load_selected_topology(shipped("p4d-24xlarge.json"), gpus(part));
      CHECK(s.topology.node_count() == 1);
      CHECK(s.gpus == part);
      // Four GPUs of one node: NVLink only, no NIC in the route of their collectives.
      CHECK(s.topology.tiers(part).nodes == 1);
    }
  }

  TEST_CASE("--gpus that is neither whole nodes nor part of one node is refused with the rule") {
    CHECK(error_of([] { (void)load_selected_topology(shipped("p4d-24xlarge.json"), gpus(12)); }) ==
          "--gpus: 12 GPUs on p4d.24xlarge: not a whole number of nodes, and more than one node holds (a plan runs on "
          "whole "
          "nodes of 8 GPUs, e.g. 8 or 16, or on 1 to 7 GPUs of one node)");
    TopologyRequest both = gpus(24);
    both.nodes = 2;
    CHECK(
        error_of([&] { (void)load_selected_topology(shipped("p4d-24xlarge.json"), both); }) ==
        "--gpus: --gpus 24 and --nodes 2 disagree: 24 GPUs are 3 node(s) of 8 GPUs on p4d.24xlarge; give one of them");
  }

  TEST_CASE("--gpus on GB200 NVL72: whole racks of 72 (18 trays each), or part of one rack") {
    const SelectedTopology two_racks = load_selected_topology(shipped("gb200-nvl72.json"), gpus(144));
    CHECK(two_racks.topology.node_count() == 2);
    CHECK(two_racks.topology.trays_per_node() == 18);
    const SelectedTopology eight = load_selected_topology(shipped("gb200-nvl72.json"), gpus(8));
    CHECK(eight.topology.node_count() == 1);
    CHECK(eight.gpus == 8);
  }

  TEST_CASE("AWS files state the on-demand price per GPU-hour: p4d 32.7726 USD / 8 GPUs, p5 98.32 USD / 8 GPUs") {
    // AWS EC2 On-Demand, US East (N. Virginia), Linux, per instance-hour, divided over its 8 GPUs.
    const auto p4d = load_topology(shipped("p4d-24xlarge.json")).price();
    REQUIRE(p4d.has_value());
    CHECK(p4d->usd == doctest::Approx(32.7726 / 8).epsilon(1e-4));
    CHECK(p4d->source.find("2020-11-03") != std::string::npos);
    const auto p5 = load_topology(shipped("p5-48xlarge.json")).price();
    REQUIRE(p5.has_value());
    CHECK(p5->usd == doctest::Approx(98.32 / 8).epsilon(1e-4));
    // A file without a price has none; a price can be edited like any figure.
    CHECK_FALSE(load_topology(shipped("dgx-h100.json")).price().has_value());
    CHECK(load_topology_with_sets(shipped("p4d-24xlarge.json"), std::nullopt, {"price.usd_per_gpu_hour=2.5"})
              .price()
              ->usd == 2.5);
  }

  TEST_CASE("InfiniBand DGX files state that their switches reduce, with NCCL's CollNet off, --set turns it on") {
    // NVIDIA SHARP runs in Quantum InfiniBand switches; NCCL uses it only with the NCCL-SHARP
    // plugin and NCCL_COLLNET_ENABLE=1, off by default (NVIDIA HPC-X, "NCCL-RDMA-SHARP Plugins").
    for (const char* file : {"dgx-a100.json", "dgx-h100.json", "dgx-h200.json", "dgx-b200.json", "gb200-nvl72.json",
                             "gb200-nvl72-4racks.json"}) {
      CAPTURE(std::string(file));
      const auto collnet = load_topology(shipped(file)).collnet();
      REQUIRE(collnet.has_value());
      CHECK_FALSE(collnet->enabled);
      CHECK(collnet->source.find("SHARP") != std::string::npos);
    }
    // EFA, Slingshot and the seed's switch reduce nothing in the network.
    for (const char* file : {"p4d-24xlarge.json", "p5-48xlarge.json", "alcf-polaris.json", "flat-400gbps.json"}) {
      CAPTURE(std::string(file));
      CHECK_FALSE(load_topology(shipped(file)).collnet().has_value());
    }
    const auto on = load_topology_with_sets(shipped("dgx-h100.json"), std::nullopt, {"collnet.enabled=true"}).collnet();
    REQUIRE(on.has_value());
    CHECK(on->enabled);
  }
}

}  // namespace what_if_test
