// topologies/mosaicml-a100-40gb.json against the facts it cites: llm-foundry's benchmarking README
// section "A100 40GB with 1600 Gbps node-node interconnect (RoCE)" (hardware_facts.csv: MosaicML
// A100 clusters) and the A100 40GB datasheet figures of hardware_facts.csv.
#include <doctest/doctest.h>

#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace mosaicml_topology_test {

using namespace stepcast::topology;
using stepcast::topology::test::shipped;

TEST_SUITE("topology.mosaicml") {
  TEST_CASE("mosaicml-a100-40gb: 8x A100-40GB per node, 1600 Gbps = 200 GB/s out of each node") {
    const Topology t = load_topology(shipped("mosaicml-a100-40gb.json"), 16);
    CHECK(t.gpu().name == "A100-SXM4-40GB");
    CHECK(t.gpu().memory.value() == doctest::Approx(40.0 * 1024 * 1024 * 1024));
    CHECK(t.gpu().memory_bandwidth.value() == doctest::Approx(1555e9));
    CHECK(t.gpu().peak_bf16.value() == doctest::Approx(312e12));
    CHECK(t.gpu_count() == 128);  // the benchmarks' largest A100 40GB run
    const CommTiers c = t.tiers(128);
    CHECK(c.node_bw.value() == doctest::Approx(1600e9 / 8.0));
    CHECK(c.gpu_nic_bw.value() == doctest::Approx(200e9 / 8.0));  // one 200 Gbps NIC per GPU (assumed split)
    CHECK(c.intra_bw.value() == doctest::Approx(300e9));          // NVLink3, 300 GB/s each way
  }
}

}  // namespace mosaicml_topology_test
