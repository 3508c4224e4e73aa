// Every shipped topology file loads, and its figures match the datasheet numbers in
// ../shared/data/hardware_facts.csv (quoted next to each check).
#include <doctest/doctest.h>

#include "stepcast/topology/topology.hpp"
#include "topology_test_util.hpp"

namespace shipped_files_test {

using namespace stepcast;
using namespace stepcast::topology;
using stepcast::topology::test::shipped;

namespace {
// 1 Gbps = 1e9 bit/s = 1e9 / 8 B/s; 1 GB/s = 1e9 B/s.
constexpr double kGbps = 1e9 / 8.0;
constexpr double kGBps = 1e9;
constexpr double kUs = 1e-6;
constexpr double kTflops = 1e12;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}  // namespace

TEST_SUITE("topology.shipped_files") {
  TEST_CASE("p4d.24xlarge: 8x A100-40GB, NVLink3 300 GB/s each way, 4 EFA x 100 Gbps = 50 GB/s per node") {
    const Topology t = load_topology(shipped("p4d-24xlarge.json"));
    CHECK(t.name() == "p4d.24xlarge");
    CHECK(!t.source().empty());
    // hardware_facts.csv: "p4d.24xlarge GPUs, 8x A100 40GB with NVSwitch"; A100 dense BF16/FP16 312,
    // TF32 156 TFLOP/s; A100 40GB HBM2 1.555 TB/s.
    CHECK(t.gpu().name == "A100-SXM4-40GB");
    CHECK(t.gpu().memory.value() == doctest::Approx(40 * kGiB));
    CHECK(t.gpu().memory_bandwidth.value() == doctest::Approx(1555 * kGBps));
    CHECK(t.gpu().peak_bf16.value() == doctest::Approx(312 * kTflops));
    CHECK(t.gpu().peak_fp16.value() == doctest::Approx(312 * kTflops));
    CHECK(t.gpu().peak_tf32.value() == doctest::Approx(156 * kTflops));
    CHECK(t.gpu().peak_fp8.value() == 0.0);
    // Default 2 nodes x 8 GPUs.
    CHECK(t.node_count() == 2);
    CHECK(t.gpus_per_node() == 8);
    CHECK(t.gpu_count() == 16);
    const CommTiers c = t.tiers(16);
    // "A100 NVLink3 bandwidth, 300+300 GB/s (per direction)".
    CHECK(c.intra_bw.value() == doctest::Approx(300 * kGBps));
    // "p4d.24xlarge EFA network, 400 Gbit/s per instance" = 50 GB/s; 4 NICs -> 100 Gbps each, and
    // a GPU alone sends through its one NIC: 12.5 GB/s.
    CHECK(c.node_bw.value() == doctest::Approx(400 * kGbps));
    CHECK(c.node_bw.value() == doctest::Approx(50 * kGBps));
    CHECK(c.gpu_nic_bw.value() == doctest::Approx(12.5 * kGBps));
    // The file's latencies: 1.7 us per NVLink link (two per route), 7 us per NIC link (two per route).
    CHECK(c.intra_latency.value() == doctest::Approx(3.4 * kUs));
    CHECK(c.inter_latency.value() == doctest::Approx(14 * kUs));
    CHECK(c.oversubscription == 1.0);
  }

  TEST_CASE("p4de.24xlarge: as p4d with A100-SXM4-80GB (80 GiB, 2.039 TB/s)") {
    const Topology t = load_topology(shipped("p4de-24xlarge.json"));
    CHECK(t.gpu().name == "A100-SXM4-80GB");
    CHECK(t.gpu().memory.value() == doctest::Approx(80 * kGiB));
    CHECK(t.gpu().memory_bandwidth.value() == doctest::Approx(2039 * kGBps));
    const CommTiers c = t.tiers(16);
    CHECK(c.node_bw.value() == doctest::Approx(50 * kGBps));
    CHECK(c.gpu_nic_bw.value() == doctest::Approx(12.5 * kGBps));
    CHECK(c.intra_bw.value() == doctest::Approx(300 * kGBps));
  }

  TEST_CASE("p5.48xlarge: 8x H100, NVLink4 450 GB/s each way, 32 EFA x 100 Gbps = 400 GB/s per node") {
    const Topology t = load_topology(shipped("p5-48xlarge.json"));
    // "H100 SXM5 BF16 tensor peak (dense), 989.4 TFLOP/s; FP8 dense 1978.9"; HBM3 3350 GB/s.
    CHECK(t.gpu().peak_bf16.value() == doctest::Approx(989.4 * kTflops));
    CHECK(t.gpu().peak_fp8.value() == doctest::Approx(1978.9 * kTflops));
    CHECK(t.gpu().memory_bandwidth.value() == doctest::Approx(3350 * kGBps));
    CHECK(t.gpu_count() == 16);
    const CommTiers c = t.tiers(16);
    // "H100 SXM5 NVLink4 bandwidth, 900 GB/s (total, both directions)" -> 450 each way.
    CHECK(c.intra_bw.value() == doctest::Approx(450 * kGBps));
    // "p5.48xlarge EFA NICs, 32"; "EFA bandwidth 400 GB/s (=3200 Gbit/s)".
    CHECK(c.node_bw.value() == doctest::Approx(3200 * kGbps));
    CHECK(c.node_bw.value() == doctest::Approx(400 * kGBps));
    // 32 NICs / 8 GPUs = 4 NICs per GPU, 4 x 100 Gbps = 50 GB/s for one GPU alone.
    CHECK(c.gpu_nic_bw.value() == doctest::Approx(50 * kGBps));
  }

  TEST_CASE("dgx-a100: 8x A100-80GB, 8x 200 Gb/s HDR per node (Selene), fat-tree") {
    const Topology t = load_topology(shipped("dgx-a100.json"));
    CHECK(t.gpu().name == "A100-SXM4-80GB");
    CHECK(t.node_count() == 4);
    const CommTiers c = t.tiers(t.gpu_count());
    // "DGX A100 compute NICs, 8x 200 Gbit/s IB" = 1600 Gbps = 200 GB/s per node, 25 GB/s per GPU.
    CHECK(c.node_bw.value() == doctest::Approx(8 * 200 * kGbps));
    CHECK(c.gpu_nic_bw.value() == doctest::Approx(25 * kGBps));
    CHECK(c.intra_bw.value() == doctest::Approx(300 * kGBps));
    // 4 nodes sit under one leaf of 20: no leaf-spine crossing, 2 NIC links of 7 us.
    CHECK(c.inter_latency.value() == doctest::Approx(14 * kUs));
    CHECK(c.oversubscription == 1.0);
  }

  TEST_CASE("dgx-h100: 8x H100, 8x 400 Gb/s NDR per node, rail-optimized") {
    const Topology t = load_topology(shipped("dgx-h100.json"));
    CHECK(t.gpu().name == "H100-SXM5-80GB");
    const CommTiers c = t.tiers(t.gpu_count());
    // "DGX H100 compute NICs, 8x ... up to 400 Gb/s" = 3200 Gbps = 400 GB/s per node.
    CHECK(c.node_bw.value() == doctest::Approx(8 * 400 * kGbps));
    CHECK(c.gpu_nic_bw.value() == doctest::Approx(50 * kGBps));
    CHECK(c.intra_bw.value() == doctest::Approx(450 * kGBps));
    // Rank 0 to GPU 7 of another node changes rail: NIC link 7 us, rail-spine 0.13 us twice,
    // NIC link 7 us = 14.26 us. A stride-8 group (GPU 0 of each node) stays on rail 0: 14 us.
    CHECK(c.inter_latency.value() == doctest::Approx(14.26 * kUs));
    CHECK(t.tiers(4, 8).inter_latency.value() == doctest::Approx(14 * kUs));
  }

  TEST_CASE("dgx-h200: the DGX H100 node with H200s, more and faster memory, the same peaks") {
    const Topology t = load_topology(shipped("dgx-h200.json"));
    CHECK(t.gpu().name == "H200-SXM5-141GB");
    // H200: 141 GB HBM3e at 4.8 TB/s on the H100's GH100 die (dense BF16 989.4 TFLOP/s); 139 GiB
    // usable as a lent H200 machine reports it.
    CHECK(t.gpu().memory.value() == doctest::Approx(139 * kGiB));
    CHECK(t.gpu().memory_bandwidth.value() == doctest::Approx(4800 * kGBps));
    CHECK(t.gpu().peak_bf16.value() == doctest::Approx(989.4 * kTflops));
    CHECK(t.gpu().peak_fp8.value() == doctest::Approx(1978.9 * kTflops));
    // "DGX H100 / H200 compute NICs, 8x ... up to 400 Gb/s" = 400 GB/s per node.
    const CommTiers c = t.tiers(t.gpu_count());
    CHECK(c.node_bw.value() == doctest::Approx(8 * 400 * kGbps));
    CHECK(c.intra_bw.value() == doctest::Approx(450 * kGBps));
  }

  TEST_CASE("flat-400gbps: the seed's machine, one GPU per node on a 400 Gbps link, no latency") {
    const Topology t = load_topology(shipped("flat-400gbps.json"));
    CHECK(t.gpu_count() == 16);
    CHECK(t.gpus_per_node() == 1);
    const CommTiers c = t.tiers(16);
    CHECK(c.nodes == 16);
    CHECK(c.ranks_per_node == 1);
    // The seed: 400 Gbps = 50e9 B/s.
    CHECK(c.node_bw.value() == doctest::Approx(50 * kGBps));
    CHECK(c.gpu_nic_bw.value() == doctest::Approx(50 * kGBps));
    CHECK(c.intra_bw.value() == 0.0);  // no intra-node peer
    CHECK(c.inter_latency.value() == 0.0);
  }

  TEST_CASE("--nodes overrides the node count of a cluster-form file") {
    const Topology flat = load_topology(shipped("flat-400gbps.json"), 1024);
    CHECK(flat.gpu_count() == 1024);
    CHECK(flat.tiers(1024).nodes == 1024);
    const Topology p4d = load_topology(shipped("p4d-24xlarge.json"), 4);
    CHECK(p4d.gpu_count() == 32);
    CHECK(p4d.node_count() == 4);
  }
}

}  // namespace shipped_files_test
