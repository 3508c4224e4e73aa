// A scale-up (NVLink) domain that spans nodes: GB200 NVL72 racks of 18 trays of 4 GPUs. The
// expected figures are derived by hand from the datasheet numbers in the shipped files (quoted
// beside each check), not read from stepcast's output.
#include <doctest/doctest.h>

#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace scale_up_domain_test {

using namespace stepcast;
using namespace stepcast::topology;
using stepcast::topology::test::shipped;

namespace {
constexpr double kGBps = 1e9;
constexpr double kUs = 1e-6;
}  // namespace

TEST_SUITE("topology.scale_up_domain") {
  TEST_CASE(
      "gb200-nvl72: one rack is one NVLink domain of 72 GPUs across 18 trays, each GPU with its own 400 Gb/s NIC") {
    const Topology t = load_topology(shipped("gb200-nvl72.json"));
    CHECK(t.gpu_count() == 72);
    CHECK(t.node_count() == 1);  // the domain is one node of the graph, as NCCL sees a multi-node NVLink domain
    CHECK(t.gpus_per_node() == 72);
    CHECK(t.trays_per_node() == 18);  // 72 GPUs / 4 per tray
    // GPUs 3 and 4 sit in trays 0 and 1, yet share the NVLink switch: one hop each way.
    CHECK(t.vertices()[t.gpus()[3]].name == "n0/tray0/gpu3");
    CHECK(t.vertices()[t.gpus()[4]].name == "n0/tray1/gpu0");
    const CommTiers c = t.tiers(72);
    CHECK(c.nodes == 1);
    // NVLink 5: 1.8 TB/s total per GPU = 900 GB/s each way.
    CHECK(c.intra_bw.value() == doctest::Approx(900 * kGBps));
    CHECK(c.intra_latency.value() == doctest::Approx(2 * 1.7 * kUs));
  }

  TEST_CASE("--nodes counts trays, four racks are four nodes of 72 GPUs with 72 NICs each") {
    const Topology t = load_topology(shipped("gb200-nvl72.json"), 72);
    CHECK(t.gpu_count() == 288);
    CHECK(t.node_count() == 4);
    const CommTiers c = t.tiers(288);
    CHECK(c.nodes == 4);
    CHECK(c.ranks_per_node == 72);
    // 72 ConnectX-7 at 400 Gb/s = 72 x 50 GB/s = 3600 GB/s leave each rack.
    CHECK(c.node_bw.value() == doctest::Approx(72 * 50 * kGBps));
    CHECK(c.nics == 72);
  }

  TEST_CASE("dgx-b200: 8x B200 on NVLink 5, 8x 400 Gb/s per node, Blackwell peaks from the datasheet") {
    const Topology t = load_topology(shipped("dgx-b200.json"));
    CHECK(t.gpus_per_node() == 8);
    CHECK(t.trays_per_node() == 1);
    // HGX B200 column, sparse figures halved: BF16 2250, FP8 4500, NVFP4 9000 TFLOP/s dense.
    CHECK(t.gpu().peak_bf16.value() == doctest::Approx(2250e12));
    CHECK(t.gpu().peak_fp8.value() == doctest::Approx(4500e12));
    CHECK(t.gpu().peak_mxfp8.value() == doctest::Approx(4500e12));
    CHECK(t.gpu().peak_nvfp4.value() == doctest::Approx(9000e12));
    CHECK(t.tiers(8).intra_bw.value() == doctest::Approx(900 * kGBps));
  }

  TEST_CASE("Hopper files give no block-scaled peaks") {
    const Topology t = load_topology(shipped("dgx-h100.json"));
    CHECK(t.gpu().peak_mxfp8.value() == 0.0);
    CHECK(t.gpu().peak_nvfp4.value() == 0.0);
  }
}

}  // namespace scale_up_domain_test
