// NCCL's tuning model: the system NCCL sees on shipped topologies and candidate times, each
// hand-derived below from NCCL 2.29's model as NVIDIA/nccl states it in src/tuning/ (cost_model.cc
// constants at commit 1fc949c5; ring.cc, nvls.cc, pat.cc at 12df1a11; tree.cc at 1fc949c5) and
// src/graph/search.cc (latencies in us, bandwidths in GB/s = 1e9 B/s, time = latency + S / algbw
// as ncclTuningGetTime has it).
#include <doctest/doctest.h>

#include <string>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/nccl_tuning.hpp"
#include "stepcast/topology/topology.hpp"
#include "support/input_error_text.hpp"

namespace nccl_tuning_test {

using namespace stepcast;
using namespace stepcast::cost;

namespace {

NcclSystem system_of(const char* file, int nodes) {
  const topology::Topology topo =
      topology::load_topology(std::string(STEPCAST_SOURCE_DIR "/topologies/") + file, nodes);
  return nccl_system(topo, topo.tiers(topo.gpu_count()));
}

const NcclCandidate& find(const NcclChoice& c, NcclAlgorithm a, NcclProtocol p) {
  for (const NcclCandidate& x : c.candidates) {
    if (x.algorithm == a && x.protocol == p) return x;
  }
  FAIL("no such candidate");
  return c.candidates.front();
}

double us(Seconds s) { return s.value() * 1e6; }

constexpr Bytes kGiB = Bytes(1073741824.0);

// The DGX files state that their switches reduce (SHARP) with NCCL's CollNet off, NCCL's default.
constexpr const char* kNvlsOffAcrossNodes =
    "NVLS across nodes needs CollNet, which NCCL leaves off by default (the NCCL-SHARP plugin and "
    "NCCL_COLLNET_ENABLE=1 turn it on: --set collnet.enabled=true)";

}  // namespace

TEST_SUITE("cost.nccl_tuning") {
  TEST_CASE("DGX H100 node: 18 NVLinks x 20.6 GB/s, ring 12 x 30 GB/s, NVLS 8 x 40 GB/s (bwInter 60)") {
    // 450 GB/s each way / 25 GB/s per NVLink4 link = 18 links; NCCL counts 20.6 GB/s per link:
    // 370.8 GB/s. Ring search (sm90 speeds 60, 50, ...): 370.8 / 60 = 6 channels x 60 = 360;
    // slower speeds give no more (50: 7 x 50 = 350, 40: 9 x 40 = 360, 30: 12 x 30 = 360, then
    // 24/60 < 0.49 stops); 60 >= 50 so the channels are duplicated: 12 x 30; 12 x 40 = 480 does
    // not fit, so pass 2 keeps 30. NVLS: (8 + 1) x speed <= 370.8 -> 40 (41.2 max), 8 heads; pass 2
    // raises bwInter (no NIC on one node) while below 2 x 40: 50, then 60, the fastest sm90 speed.
    // The communicator runs twice the ring's channels: 24 (connect.cc).
    const NcclSystem s = system_of("dgx-h100.json", 1);
    CHECK(s.compute_capability == 90);
    CHECK(s.nvlink);
    CHECK(s.nvswitch);
    CHECK(s.channels == 12);
    CHECK(s.channel_bw.value() == doctest::Approx(30e9));
    CHECK(s.nvls_channels == 8);
    CHECK(s.nvls_channel_bw.value() == doctest::Approx(40e9));
    CHECK(s.nvls_inter_bw.value() == doctest::Approx(60e9));
    CHECK(s.comm_channels == 24);
  }

  TEST_CASE("p4d: A100 12 NVLinks x 20 GB/s, two nodes: 4 EFA NICs of 12.5 GB/s give 4 ring channels of 12 GB/s") {
    // One node: 300 / 25 = 12 links x 20 = 240 GB/s; speeds 40, 30, ...: 6 x 40 = 240 = total,
    // stop; 40 >= 25: duplicated to 12 x 20; 12 x 30 = 360 > 240 so pass 2 keeps 20.
    const NcclSystem one = system_of("p4d-24xlarge.json", 1);
    CHECK(one.compute_capability == 80);
    CHECK(one.channels == 12);
    CHECK(one.channel_bw.value() == doctest::Approx(20e9));
    CHECK(one.nvls_channels == 0);
    // Two nodes: inter speeds 48, 30, 28, 24, 20, 18, 15, 12: 12 is the first <= 12.5, one
    // channel per NIC, 4 x 12 = 48; 10, 9, 7 give less, 6 gives 8 x 6 = 48 (not more), 5/12 < 0.49
    // stops; 12 < 25: no duplication; 15 > 12.5 cannot raise the speed.
    const NcclSystem two = system_of("p4d-24xlarge.json", 2);
    CHECK(two.nodes == 2);
    CHECK(two.channels == 4);
    CHECK(two.channel_bw.value() == doctest::Approx(12e9));
  }

  TEST_CASE("8 x H100, one node, 1 GiB all-reduce: NVLS/Simple 3972.6 us beats ring/Simple 5275.6 us") {
    const NcclChoice c = nccl_choose(CollectiveOp::kAllReduce, kGiB, system_of("dgx-h100.json", 1));
    // ring/Simple: latency = baseLat 8.4 + 2(8-1) = 14 steps x hwLat NVLink 3.4 = 56.0 us;
    // algbw = 12 x 30 GB/s x nRanks/nsteps 8/14 = 205.714 GB/s; 2^30 B / 205.714 GB/s = 5219.57 us.
    const NcclCandidate& ring = find(c, NcclAlgorithm::kRing, NcclProtocol::kSimple);
    CHECK(us(ring.latency) == doctest::Approx(56.0));
    CHECK(ring.algbw.value() == doctest::Approx(360e9 * 8.0 / 14.0));
    CHECK(us(ring.time) == doctest::Approx(5275.57).epsilon(1e-5));
    // ring/LL128: 14.0 + 14 x 1.9 = 40.6 us; 360 x 0.92 = 331.2 (under 12 x 36.7 = 440.4) x 8/14.
    const NcclCandidate& ll128 = find(c, NcclAlgorithm::kRing, NcclProtocol::kLL128);
    CHECK(us(ll128.latency) == doctest::Approx(40.6));
    CHECK(ll128.algbw.value() == doctest::Approx(331.2e9 * 8.0 / 14.0));
    // tree/Simple: 8.4 + 2 x (7 x 4.0) = 64.4 us; 360 x 0.92 = 331.2 (under 12 x 38.7) x 0.5 = 165.6.
    const NcclCandidate& tree = find(c, NcclAlgorithm::kTree, NcclProtocol::kSimple);
    CHECK(us(tree.latency) == doctest::Approx(64.4));
    CHECK(tree.algbw.value() == doctest::Approx(165.6e9));
    // NVLS/Simple (nvls.cc): latency = hwLat 25 us; per channel min(bwIntra 40 x nvlsEfficiency
    // 0.85 x 7/8 x 2 = 59.5, bwInter 60) = 59.5, x 8 = 476 bus, x 8/14 = 272 GB/s: 3947.6 us. The
    // node's nccl-tests log (NCCL 2.29.2) measured 481 GB/s busbw at 8 GiB, against this 476.
    const NcclCandidate& nvls = find(c, NcclAlgorithm::kNvls, NcclProtocol::kSimple);
    CHECK(us(nvls.latency) == doctest::Approx(25.0));
    CHECK(nvls.algbw.value() == doctest::Approx(476e9 * 8.0 / 14.0));
    CHECK(us(nvls.time) == doctest::Approx(25.0 + 1073741824.0 / 272e9 * 1e6));
    CHECK(find(c, NcclAlgorithm::kNvlsTree, NcclProtocol::kSimple).disabled_because ==
          "NVLS-Tree runs across nodes only");
    CHECK(find(c, NcclAlgorithm::kPat, NcclProtocol::kSimple).disabled_because == "NCCL has no PAT all-reduce");
    CHECK(c.chosen().algorithm == NcclAlgorithm::kNvls);
    CHECK(c.why.find("nvls/Simple wins") == 0);
  }

  TEST_CASE("8 x H100, one node, 8 KiB all-reduce: ring/LL is latency-bound and wins in 15.10 us") {
    const NcclChoice c = nccl_choose(CollectiveOp::kAllReduce, Bytes(8192.0), system_of("dgx-h100.json", 1));
    // ring/LL: 6.6 + 14 x 0.6 = 15.0 us; 360 x 0.5 = 180 capped at llMaxBw(Hopper, 1 node) 141,
    // x 8/14 = 80.571 GB/s: 8192 B takes 0.102 us.
    const NcclCandidate& ll = find(c, NcclAlgorithm::kRing, NcclProtocol::kLL);
    CHECK(us(ll.latency) == doctest::Approx(15.0));
    CHECK(ll.algbw.value() == doctest::Approx(141e9 * 8.0 / 14.0));
    // tree/LL: 6.8 + 2 x 7 x 0.6 = 15.2 us; 331.2 / 3.8 = 87.16 (under 141) x 0.5, and the tree
    // correction at log2(8192 / 64) = 7 for LL is 0.7: 30.5 GB/s.
    const NcclCandidate& tree = find(c, NcclAlgorithm::kTree, NcclProtocol::kLL);
    CHECK(us(tree.latency) == doctest::Approx(15.2));
    CHECK(tree.algbw.value() == doctest::Approx(331.2e9 / 3.8 * 0.5 * 0.7));
    CHECK(c.chosen().algorithm == NcclAlgorithm::kRing);
    CHECK(c.chosen().protocol == NcclProtocol::kLL);
    CHECK(us(c.chosen().time) == doctest::Approx(15.0 + 8192.0 / (141e9 * 8.0 / 14.0) * 1e6));
  }

  TEST_CASE("8 x H100, one node: all-reduce switches from ring/LL to NVLS near 1118 KiB") {
    // ring/LL: 15.0 us + S / 80.571 GB/s; NVLS: 25.0 us + S / 272 GB/s. They cross where
    // S (1/80.571 - 1/272) / 1e9 = 10 us: S = 10e-6 / 8.7348e-12 = 1,144,840 B (1118 KiB); ring/LL128
    // (40.6 us + S / 189.26 GB/s) and tree/LL128 (31.5 us + S / (257.6 x 0.5 x 0.6 correction))
    // are slower than one of the two there.
    const NcclSystem s = system_of("dgx-h100.json", 1);
    const auto chosen = [&](double size) { return nccl_choose(CollectiveOp::kAllReduce, Bytes(size), s).chosen(); };
    CHECK(chosen(1110.0 * 1024).algorithm == NcclAlgorithm::kRing);
    CHECK(chosen(1110.0 * 1024).protocol == NcclProtocol::kLL);
    CHECK(chosen(1126.0 * 1024).algorithm == NcclAlgorithm::kNvls);
  }

  TEST_CASE("2 x p4d (16 x A100), all-reduce: tree/LL at 1 KiB, ring/Simple with the plateau at 1 GiB") {
    const NcclSystem s = system_of("p4d-24xlarge.json", 2);
    // 1 KiB, tree/LL: 6.8 + 2 x ((8-1) x NVLink 0.6 + log2(2) x net 5.0) = 25.2 us; 48 x 0.92 =
    // 44.16 (under 4 x 23.6) / 3.8 = 11.62 (under llMaxBw 39.0) x 0.5, x 0.9 (correction at 2^4):
    // 5.23 GB/s. ring/LL: 6.6 + (30 - 2) x max(0.6, net overhead 1.0) + 2(2 - 1) = 2 x 2.7 = 40.0 us.
    const NcclChoice small = nccl_choose(CollectiveOp::kAllReduce, Bytes(1024.0), s);
    CHECK(us(find(small, NcclAlgorithm::kTree, NcclProtocol::kLL).latency) == doctest::Approx(25.2));
    CHECK(find(small, NcclAlgorithm::kTree, NcclProtocol::kLL).algbw.value() ==
          doctest::Approx(44.16e9 / 3.8 * 0.5 * 0.9));
    CHECK(us(find(small, NcclAlgorithm::kRing, NcclProtocol::kLL).latency) == doctest::Approx(40.0));
    CHECK(small.chosen().algorithm == NcclAlgorithm::kTree);
    CHECK(small.chosen().protocol == NcclProtocol::kLL);
    // 1 GiB, ring/Simple: (8.4 + 28 x 3.4 + 2 x 14) x 1.4 (plateau) = 184.24 us; 4 x 12 = 48
    // x 16/30 = 25.6 GB/s: 41943.04 us. tree/Simple: 8.4 + 2 x (7 x 4.0 + 14) = 92.4 us, 44.16 x
    // 0.5 = 22.08 GB/s: 48629.6 us. NVLS is left out: A100.
    const NcclChoice big = nccl_choose(CollectiveOp::kAllReduce, kGiB, s);
    const NcclCandidate& ring = find(big, NcclAlgorithm::kRing, NcclProtocol::kSimple);
    CHECK(us(ring.latency) == doctest::Approx(184.24));
    CHECK(us(ring.time) == doctest::Approx(184.24 + 41943.04));
    CHECK(us(find(big, NcclAlgorithm::kTree, NcclProtocol::kSimple).time) ==
          doctest::Approx(92.4 + 1073741824.0 / 22.08e9 * 1e6));
    CHECK(big.chosen().algorithm == NcclAlgorithm::kRing);
    CHECK(big.chosen().protocol == NcclProtocol::kSimple);
    CHECK(find(big, NcclAlgorithm::kNvls, NcclProtocol::kSimple).disabled_because ==
          "NVLS needs Hopper or later GPUs on an NVSwitch");
  }

  TEST_CASE("10 DGX H100 nodes x 8 GPUs: NVLS-Tree all-reduce (nvls.cc), 8 heads of 40 GB/s, bwInter 48") {
    // Ring graph: 8 NICs of 50 GB/s, a GPU's 370.8 GB/s of NVLink: sm90 inter speed 48 fits 7
    // channels, 45 fits 8 = 360 (no duplication: Hopper below 50 GB/s with more than 4 channels).
    // NVLS graph: 8 heads, each on its own NIC; (8 + 1) x speed <= 370.8 first at 40 (48: 432,
    // 45: 405, 42: 378); pass 2 raises bwInter to 48 (< 2 x 40, <= the NIC's 50).
    const NcclSystem s = system_of("dgx-h100.json", 10);
    CHECK(s.channels == 8);
    CHECK(s.channel_bw.value() == doctest::Approx(45e9));
    CHECK(s.comm_channels == 16);  // 2 x 8; 45 is not above 45, so no second doubling
    CHECK(s.nvls_channels == 8);
    CHECK(s.nvls_channel_bw.value() == doctest::Approx(40e9));
    CHECK(s.nvls_inter_bw.value() == doctest::Approx(48e9));
    const Bytes size(17179869184.0);  // 16 GiB, the log's largest all-reduce
    const NcclChoice c = nccl_choose(CollectiveOp::kAllReduce, size, s);
    // NVLS-Tree: latency 0 + NVLink 25 + 2 x log2(10) = 3 x net 20.9 = 150.4 us; per channel
    // min(40 x 0.85 x 7/8 x 2 = 59.5, bwInter 48 (x1 beyond 2 nodes), Hopper NVLS-Tree max 45.5) =
    // 45.5, x 8 = 364 bus, x 80/158 = 184.30 GB/s.
    const NcclCandidate& nt = find(c, NcclAlgorithm::kNvlsTree, NcclProtocol::kSimple);
    CHECK(us(nt.latency) == doctest::Approx(150.4));
    CHECK(nt.algbw.value() == doctest::Approx(364e9 * 80.0 / 158.0));
    // ring/Simple: (8.4 + (158 - 18) x 3.4 + 2 (10 - 1) = 18 x 14) x 1.4 plateau = 1030.96 us;
    // 360 x 80/158 = 182.28 GB/s: slower than NVLS-Tree in both parts.
    const NcclCandidate& ring = find(c, NcclAlgorithm::kRing, NcclProtocol::kSimple);
    CHECK(us(ring.latency) == doctest::Approx(1030.96));
    CHECK(ring.algbw.value() == doctest::Approx(360e9 * 80.0 / 158.0));
    CHECK(c.chosen().algorithm == NcclAlgorithm::kNvlsTree);
    CHECK(find(c, NcclAlgorithm::kNvls, NcclProtocol::kSimple).disabled_because == kNvlsOffAcrossNodes);
    // The xxrjun log (NCCL 2.29.2, 10 x 8 H100) measured 105854 us: the model is 12% faster, as
    // these nodes moved 40 GB/s per NIC with 8 GPUs where 1 to 4 GPUs per node moved 48.7.
    CHECK(us(c.chosen().time) == doctest::Approx(150.4 + 17179869184.0 / (364e9 * 80.0 / 158.0) * 1e6));
    CHECK(us(c.chosen().time) > 0.85 * 105854.0);
  }

  TEST_CASE("one GPU per node: PAT (pat.cc) wins small all-gathers, the ring large ones, 8 GPUs per node: no PAT") {
    // 10 DGX H100 nodes, GPU 0 of each: ring graph 1 channel of 48 GB/s duplicated to 2 x 24.
    const NcclSystem s = system_of("dgx-h100.json", 10);
    const topology::Topology topo = topology::load_topology(STEPCAST_SOURCE_DIR "/topologies/dgx-h100.json", 10);
    const NcclSystem one = nccl_system(topo, topo.tiers(10, 8));
    CHECK(one.ranks_per_node == 1);
    CHECK(one.channels == 2);
    CHECK(one.channel_bw.value() == doctest::Approx(24e9));
    // PAT: 8 + log2(10) = 3 x 14 / 3.5 + 10 ranks x 2.8 = 48 us; min(24, 24) x 2 x 0.75 = 36 GB/s.
    // ring/LL (one rank per node: the tree's network latency 5.0 per step): 6.6 + 9 x 5.0 = 51.6 us.
    const NcclChoice small = nccl_choose(CollectiveOp::kAllGather, Bytes(65536.0), one);
    const NcclCandidate& pat = find(small, NcclAlgorithm::kPat, NcclProtocol::kSimple);
    CHECK(us(pat.latency) == doctest::Approx(48.0));
    CHECK(pat.algbw.value() == doctest::Approx(36e9));
    CHECK(us(find(small, NcclAlgorithm::kRing, NcclProtocol::kLL).latency) == doctest::Approx(51.6));
    CHECK(small.chosen().algorithm == NcclAlgorithm::kPat);
    // 1 GiB: ring/Simple 8.4 + 9 x 14 = 134.4 us + S / (48 x 10/9 = 53.3 GB/s) beats PAT's 36 GB/s.
    const NcclChoice big = nccl_choose(CollectiveOp::kReduceScatter, kGiB, one);
    CHECK(us(find(big, NcclAlgorithm::kRing, NcclProtocol::kSimple).latency) == doctest::Approx(134.4));
    CHECK(big.chosen().algorithm == NcclAlgorithm::kRing);
    const NcclChoice eight = nccl_choose(CollectiveOp::kAllGather, Bytes(65536.0), s);
    CHECK(find(eight, NcclAlgorithm::kPat, NcclProtocol::kSimple).disabled_because ==
          "PAT runs with one GPU per node (NCCL prices the multi-GPU-per-node PAT out: opt-in only)");
  }

  TEST_CASE("which candidates NCCL leaves out: tree outside all-reduce, LL128 without NVLink, NVLS across nodes") {
    const NcclChoice bcast = nccl_choose(CollectiveOp::kBroadcast, kGiB, system_of("dgx-h100.json", 1));
    CHECK(find(bcast, NcclAlgorithm::kTree, NcclProtocol::kLL).disabled_because == "NCCL has no tree broadcast");
    CHECK(find(bcast, NcclAlgorithm::kNvls, NcclProtocol::kSimple).disabled_because == "NCCL has no NVLS broadcast");
    CHECK(bcast.chosen().algorithm == NcclAlgorithm::kRing);
    const NcclChoice two = nccl_choose(CollectiveOp::kAllReduce, kGiB, system_of("dgx-h100.json", 2));
    CHECK(find(two, NcclAlgorithm::kNvls, NcclProtocol::kSimple).disabled_because == kNvlsOffAcrossNodes);
    NcclSystem pcie = system_of("p4d-24xlarge.json", 1);
    pcie.nvlink = pcie.nvswitch = false;
    const NcclChoice c = nccl_choose(CollectiveOp::kAllReduce, kGiB, pcie);
    CHECK(find(c, NcclAlgorithm::kRing, NcclProtocol::kLL128).disabled_because ==
          "LL128 is off by default without NVLink");
    // Naming the protocol enables it anyway, as NCCL_PROTO=LL128 does.
    const NcclChoice forced = nccl_choose(CollectiveOp::kAllReduce, kGiB, pcie, {std::nullopt, NcclProtocol::kLL128});
    CHECK(forced.chosen().protocol == NcclProtocol::kLL128);
  }

  TEST_CASE("LL128 across nodes only where each GPU reaches its NIC through PCIe switches") {
    // NVIDIA/nccl src/graph/tuning.cc enables LL128 by default only where the graph's GPU-to-NIC
    // path (typeInter) is PATH_PXB or closer. ALCF's Polaris device affinity table (nvidia-smi
    // topo -m) shows each GPU's nearest NIC at PHB, through the CPU: its file says so.
    constexpr const char* kOff =
        "LL128 is off by default across nodes where a GPU reaches its NIC through the CPU (beyond PXB)";
    const NcclSystem polaris = system_of("alcf-polaris.json", 2);
    CHECK_FALSE(polaris.nic_behind_pcie_switch);
    const NcclChoice across = nccl_choose(CollectiveOp::kAllGather, Bytes(4194304.0), polaris);
    CHECK(find(across, NcclAlgorithm::kRing, NcclProtocol::kLL128).disabled_because == kOff);
    CHECK(across.chosen().protocol != NcclProtocol::kLL128);
    // On one node NCCL trims the NICs from its graph: the path no longer matters.
    const NcclChoice inside =
        nccl_choose(CollectiveOp::kAllGather, Bytes(4194304.0), system_of("alcf-polaris.json", 1));
    CHECK(find(inside, NcclAlgorithm::kRing, NcclProtocol::kLL128).disabled_because.empty());
    // A file that states no path is wired as the cluster form draws it, each NIC on its GPU's switch.
    const NcclSystem dgx = system_of("dgx-a100.json", 2);
    CHECK(dgx.nic_behind_pcie_switch);
    CHECK(find(nccl_choose(CollectiveOp::kAllGather, Bytes(4194304.0), dgx), NcclAlgorithm::kRing, NcclProtocol::kLL128)
              .disabled_because.empty());
  }

  TEST_CASE("an AMD host: NCCL posts network operations at 2 us a ring step and caps LL with its AMD row") {
    // src/tuning/ring.cc getNetOverhead: 2 us on an x86 AMD host, 1 us on the others, x3 for Simple,
    // the least every step of an inter-node ring costs; tuning_general.cc takes llMaxBws' row 1
    // (AMD) across nodes. Polaris' nodes hold one AMD EPYC 7543P (its file says so). All-gather on
    // 256 nodes x 4 A100 (1023 steps, 255 across nodes, 2 ring channels of 24 GB/s):
    //   ring/LL     6.6 + 768 x max(0.6, 2.0) + 255 x 2.7 = 2231.1 us (an Intel host: 1463.1)
    //   ring/Simple 8.4 + 768 x max(3.4, 3 x 2.0) + 255 x 14 = 8186.4 us (Intel: 3 x 1.0 < 3.4, 6189.6)
    //   LL algbw    min(2 x 24 x 0.5, AMD's 19.0 beyond 2 nodes; Intel's 20.4) x 1024/1023
    const NcclSystem amd = system_of("alcf-polaris.json", 256);
    CHECK(amd.host_cpu == topology::HostCpu::kAmd);
    const NcclChoice c = nccl_choose(CollectiveOp::kAllGather, Bytes(16777216.0), amd);
    CHECK(us(find(c, NcclAlgorithm::kRing, NcclProtocol::kLL).latency) == doctest::Approx(2231.1));
    CHECK(us(find(c, NcclAlgorithm::kRing, NcclProtocol::kSimple).latency) == doctest::Approx(8186.4));
    CHECK(find(c, NcclAlgorithm::kRing, NcclProtocol::kLL).algbw.value() == doctest::Approx(19.0e9 * 1024.0 / 1023.0));
    // The same nodes with the host left unstated: NCCL's first row, an Intel host.
    const topology::Topology topo =
        topology::load_topology(std::string(STEPCAST_SOURCE_DIR "/topologies/alcf-polaris.json"), 256);
    NcclHardware unstated = nccl_hardware(topo);
    unstated.host_cpu.reset();
    const NcclSystem intel = nccl_system(unstated, topo.tiers(topo.gpu_count()));
    CHECK(intel.host_cpu == topology::HostCpu::kIntel);
    const NcclChoice i = nccl_choose(CollectiveOp::kAllGather, Bytes(16777216.0), intel);
    CHECK(us(find(i, NcclAlgorithm::kRing, NcclProtocol::kLL).latency) == doctest::Approx(1463.1));
    CHECK(us(find(i, NcclAlgorithm::kRing, NcclProtocol::kSimple).latency) == doctest::Approx(6189.6));
    CHECK(find(i, NcclAlgorithm::kRing, NcclProtocol::kLL).algbw.value() == doctest::Approx(20.4e9 * 1024.0 / 1023.0));
    // On one node neither applies: no network steps, and llMaxBws' row is the GPU's (Ampere 87.7).
    CHECK(us(find(nccl_choose(CollectiveOp::kAllGather, Bytes(16777216.0), system_of("alcf-polaris.json", 1)),
                  NcclAlgorithm::kRing, NcclProtocol::kLL)
                 .latency) == doctest::Approx(6.6 + 3 * 0.6));
  }

  TEST_CASE("a filter that leaves nothing is an input error that says why") {
    CHECK(test::input_error_text([] {
            nccl_choose(CollectiveOp::kAllReduce, kGiB, system_of("p4d-24xlarge.json", 1),
                        {NcclAlgorithm::kNvls, std::nullopt});
          }) ==
          "no NCCL algorithm and protocol left for all-reduce on this system; nvls/Simple: NVLS needs Hopper or "
          "later GPUs on an NVSwitch");
  }

  TEST_CASE("calibrated factors scale latency and algorithm bandwidth of their protocol only") {
    NcclTuning tuning;
    tuning[static_cast<std::size_t>(NcclProtocol::kSimple)] = {2.0, 0.5};
    const NcclSystem s = system_of("dgx-h100.json", 1);
    const NcclFilter ring_simple{NcclAlgorithm::kRing, NcclProtocol::kSimple};
    const NcclCandidate plain = nccl_choose(CollectiveOp::kAllReduce, kGiB, s, ring_simple).chosen();
    const NcclCandidate tuned = nccl_choose(CollectiveOp::kAllReduce, kGiB, s, ring_simple, tuning).chosen();
    CHECK(tuned.latency.value() == doctest::Approx(2.0 * plain.latency.value()));
    CHECK(tuned.algbw.value() == doctest::Approx(0.5 * plain.algbw.value()));
    const NcclFilter ring_ll{NcclAlgorithm::kRing, NcclProtocol::kLL};
    CHECK(nccl_choose(CollectiveOp::kAllReduce, kGiB, s, ring_ll, tuning).chosen().time ==
          nccl_choose(CollectiveOp::kAllReduce, kGiB, s, ring_ll).chosen().time);
  }

  TEST_CASE("a GPU block without a compute capability is refused, naming its file and the figure") {
    topology::Topology topo = topology::load_topology(STEPCAST_SOURCE_DIR "/topologies/p4d-24xlarge.json", 1);
    const std::string msg = test::input_error_text([&] {
      topology::GpuSpec gpu = topo.gpu();
      gpu.name = "MI300X";
      gpu.compute_capability = 0;
      const topology::Topology other(topo.name(), topo.source(), gpu,
                                     std::vector<topology::Vertex>(topo.vertices().begin(), topo.vertices().end()),
                                     std::vector<topology::Link>(topo.links().begin(), topo.links().end()), 1.0);
      nccl_system(other, other.tiers(8));
    });
    CHECK(msg == STEPCAST_SOURCE_DIR
          "/topologies/gpus/a100-sxm4-40gb.json:/compute_capability: NCCL's tuning model needs the GPU's compute "
          "capability, and the MI300X block of p4d.24xlarge states none: name a GPU of the catalogue "
          "(topologies/gpus/) or add \"compute_capability\": \"9.0\"");
  }

  TEST_CASE("names: NCCL_PROTO spellings, case-insensitive") {
    CHECK(parse_nccl_protocol("ll128") == NcclProtocol::kLL128);
    CHECK(parse_nccl_protocol("simple") == NcclProtocol::kSimple);
    CHECK(!parse_nccl_protocol("bogus"));
    CHECK(parse_nccl_algorithm("NVLS") == NcclAlgorithm::kNvls);
    CHECK(accepted_nccl_algorithms(CollectiveOp::kAllGather) == "ring, collnetdirect, nvls, pat");
    CHECK(parse_nccl_algorithm("NVLSTree") == NcclAlgorithm::kNvlsTree);
    CHECK(accepted_nccl_algorithms(CollectiveOp::kAllReduce) ==
          "tree, ring, collnetdirect, collnetchain, nvls, nvlstree");
  }
}

}  // namespace nccl_tuning_test
