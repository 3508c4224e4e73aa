// --gpus-per-domain: a plan on part of every scale-up domain, as NVIDIA's GB200 NVL72 runs of 128
// and 256 GPUs used 64 of each rack's 72 (16 of 18 trays: the Slurm segment NVIDIA recommends for
// jobs of 128 GPUs and more). The expected figures are derived by hand from the figures of
// topologies/gb200-nvl72.json (NVIDIA's datasheet: 4 GPUs and 4 ConnectX-7 NICs of 400 Gb/s per
// tray, 900 GB/s of NVLink each way per GPU, 1.7 us per NVLink hop), not read from stepcast's output.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "stepcast/topology/overrides.hpp"
#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace partial_domain_test {

using namespace stepcast;
using namespace stepcast::topology;
using stepcast::topology::test::error_of;
using stepcast::topology::test::shipped;

namespace {
constexpr double kGBps = 1e9;
constexpr double kUs = 1e-6;

SelectedTopology nvl72(std::optional<int> gpus, std::optional<int> per_domain, std::optional<int> nodes = {}) {
  TopologyRequest r;
  r.gpus = gpus;
  r.gpus_per_domain = per_domain;
  r.nodes = nodes;
  return load_selected_topology(shipped("gb200-nvl72.json"), r);
}

int count_vertices(const Topology& t, VertexKind kind) {
  int n = 0;
  for (const Vertex& v : t.vertices()) n += v.kind == kind ? 1 : 0;
  return n;
}

bool crosses_a_nic(const std::vector<Hop>& route, const Topology& t) {
  for (const Hop& h : route) {
    if (t.links()[h.link].tier != LinkTier::kIntraNode) return true;
  }
  return false;
}
}  // namespace

TEST_SUITE("topology.partial_domain") {
  TEST_CASE("256 GPUs at 64 per domain are 4 racks (72 trays) whose NVLink domains hold 64 GPUs and 64 NICs each") {
    // 256 / 64 = 4 domains; a domain is a rack of 18 trays, so the cluster is 4 x 18 = 72 trays.
    const SelectedTopology s = nvl72(256, 64);
    const Topology& t = s.topology;
    CHECK(s.gpus == 256);
    CHECK(t.gpu_count() == 256);
    CHECK(t.node_count() == 4);
    CHECK(t.gpus_per_node() == 64);  // the NVLink domain the collectives see
    CHECK(t.domain_gpus() == 72);    // of a rack's 18 x 4
    CHECK(t.trays_per_node() == 18);
    CHECK(t.gpus_per_tray() == 4);
    // NICs stay one per GPU: 16 used trays x 4 ConnectX-7 = 64 per rack, 256 in all.
    CHECK(count_vertices(t, VertexKind::kNic) == 256);
    // GPU 63 is the last of rack 0 (tray 15, its 4th GPU); GPU 64 the first of rack 1.
    CHECK(t.vertices()[t.gpus()[63]].name == "n0/tray15/gpu3");
    CHECK(t.vertices()[t.gpus()[64]].name == "n1/tray0/gpu0");
    // --nodes counts whole racks' trays: the same cluster given as --nodes 72.
    CHECK(nvl72(std::nullopt, 64, 72).topology.gpu_count() == 256);
  }

  TEST_CASE("a tp=8 / ep=64 group of 64 consecutive ranks stays on NVLink, a dp group across the racks crosses NICs") {
    const Topology t = nvl72(256, 64).topology;
    // Megatron-Core's tp-cp-ep-dp-pp order makes a stage's tensor and expert ranks consecutive:
    // tp=8 is GPUs 0..7, ep=64 (etp=1) GPUs 0..63, all in rack 0.
    for (const int ranks : {8, 64}) {
      const CommTiers c = t.tiers(ranks);
      CHECK(c.nodes == 1);
      CHECK(c.ranks_per_node == ranks);
      // Every route GPU -> NVLink switch -> GPU: 900 GB/s each way, 2 x 1.7 us.
      CHECK(c.intra_bw.value() == doctest::Approx(900 * kGBps));
      CHECK(c.intra_latency.value() == doctest::Approx(3.4 * kUs));
      CHECK(c.nics == 0);
    }
    CHECK_FALSE(crosses_a_nic(t.route(0, 63), t));
    // The dp group of tp=8, pp=1 on 256 GPUs: 32 ranks 8 apart, 8 per rack in 4 racks. Each
    // GPU leaves its rack through its own 400 Gb/s NIC = 50 GB/s, and the 8 ranks of one rack
    // together through 8 NICs = 400 GB/s.
    const CommTiers dp = t.tiers(32, 8);
    CHECK(dp.nodes == 4);
    CHECK(dp.ranks_per_node == 8);
    CHECK(dp.gpu_nic_bw.value() == doctest::Approx(50 * kGBps));
    CHECK(dp.nics == 8);
    CHECK(dp.node_bw.value() == doctest::Approx(8 * 50 * kGBps));
    CHECK(dp.inter_latency.value() > 0.0);
    CHECK(crosses_a_nic(t.route(0, 64), t));
    // All 256 GPUs: 64 NICs leave each rack, 64 x 50 GB/s = 3200 GB/s (the 8 idle GPUs' NICs are not the job's).
    CHECK(t.tiers(256).node_bw.value() == doctest::Approx(64 * 50 * kGBps));
  }

  TEST_CASE("--gpus-per-domain 72 is the whole rack: the same graph as without it") {
    const Topology whole = nvl72(144, std::nullopt).topology;
    const Topology all = nvl72(144, 72).topology;
    CHECK(all.gpu_count() == whole.gpu_count());
    CHECK(all.gpus_per_node() == 72);
    CHECK(all.vertices().size() == whole.vertices().size());
    CHECK(all.links().size() == whole.links().size());
  }

  TEST_CASE("whole trays: 8 per domain is 2 trays of each rack, and the rule is refused with its values") {
    // 2 trays of each of 4 racks: 32 GPUs, 8-GPU NVLink domains.
    const Topology t = nvl72(32, 8).topology;
    CHECK(t.node_count() == 4);
    CHECK(t.gpus_per_node() == 8);
    // 62 is 15.5 trays of 4 GPUs.
    CHECK(error_of([] { nvl72(248, 62); }).find("not a whole number of trays of 4 GPUs") != std::string::npos);
    // 76 is more than the rack's 72.
    CHECK(error_of([] { nvl72(152, 76); }).find("more than the 72 GPUs of one domain") != std::string::npos);
    // 200 GPUs are 3.125 domains of 64.
    CHECK(error_of([] { nvl72(200, 64); }).find("not a whole number of domains of 64 GPUs") != std::string::npos);
    // 256 GPUs at 64 per domain are 4 racks = 72 trays, not 36.
    CHECK(error_of([] { nvl72(256, 64, 36); }).find("are 4 domain(s) of 72 GPUs, which are 72 node(s)") !=
          std::string::npos);
    // A DGX node is its own NVLink domain of 8 GPUs: 4 of each is not a whole node.
    TopologyRequest dgx;
    dgx.gpus = 16;
    dgx.gpus_per_domain = 4;
    CHECK(error_of([&] {
            load_selected_topology(shipped("dgx-h100.json"), dgx);
          }).find("each node of this file is its own domain of 8 GPUs") != std::string::npos);
  }

  TEST_CASE("256 GPUs without --gpus-per-domain are refused with the part of each rack that fits them") {
    // 256 = 3 x 72 + 40: no whole racks; the largest whole-tray part of 72 dividing 256 is 64.
    const std::string e = error_of([] { nvl72(256, std::nullopt); });
    CHECK(e.find("--gpus-per-domain 64 runs 4 domains of 64") != std::string::npos);
  }

  TEST_CASE("the part of each rack a search takes: the most whole trays that split the GPUs into whole racks") {
    const Topology rack = load_topology(shipped("gb200-nvl72.json"));
    // 128 = 2 x 64 and 256 = 4 x 64: 64 (16 trays) is the largest multiple of 4 up to 72 dividing
    // them. 200 = 5 x 40 (10 trays); 144 = 2 x 72 fills whole racks, and 72 or fewer one rack.
    CHECK(partial_domain_gpus(128, rack) == 64);
    CHECK(partial_domain_gpus(256, rack) == 64);
    CHECK(partial_domain_gpus(200, rack) == 40);
    CHECK(partial_domain_gpus(144, rack) == 0);
    CHECK(partial_domain_gpus(72, rack) == 0);
    CHECK(partial_domain_gpus(64, rack) == 0);
    // 130 = 2 x 5 x 13: no multiple of 4 divides it, so no whole trays split it.
    CHECK(partial_domain_gpus(130, rack) == 0);
    // A DGX node is its own domain: nothing to split.
    CHECK(partial_domain_gpus(12, load_topology(shipped("dgx-h100.json"))) == 0);
  }

  TEST_CASE("a count whole racks hold may also run on part of more racks: 576 is 8 x 72 or 9 x 64") {
    const Topology rack = load_topology(shipped("gb200-nvl72.json"));
    // 576 = 8 x 72 = 9 x 64: 68 (17 trays) does not divide it, 64 (16 trays) does.
    CHECK(partial_domain_alternative(576, rack) == 64);
    // 1152 = 16 x 72 = 18 x 64.
    CHECK(partial_domain_alternative(1152, rack) == 64);
    // 144 = 2 x 72 = 3 x 48: 68 down to 52 leave a remainder, 48 (12 trays) is the first that does not.
    CHECK(partial_domain_alternative(144, rack) == 48);
    // 216 = 3 x 72: of 68 down to 40, none divides 216 (216 / 40 = 5.4, / 36 = 6 is half a rack):
    // an alternative of half a rack or less is no placement a scheduler picks for whole racks.
    CHECK(partial_domain_alternative(216, rack) == 0);
    // One rack, or a count no whole racks hold, has no alternative here (partial_domain_gpus places those).
    CHECK(partial_domain_alternative(72, rack) == 0);
    CHECK(partial_domain_alternative(256, rack) == 0);
    // A DGX node is its own domain: nothing to split.
    CHECK(partial_domain_alternative(64, load_topology(shipped("dgx-h100.json"))) == 0);
  }

  TEST_CASE("the placements a count is searched on: part of each rack, both, or whole racks only") {
    const Topology rack = load_topology(shipped("gb200-nvl72.json"));
    // 256 fills no whole racks: 64 of each of 4. 576 = 8 x 72 = 9 x 64: both. 216 = 3 x 72 only.
    CHECK(domain_placements(256, rack) == std::vector<int>{64});
    CHECK(domain_placements(576, rack) == std::vector<int>{0, 64});
    CHECK(domain_placements(216, rack) == std::vector<int>{0});
  }
}

}  // namespace partial_domain_test
