// Collectives on a scale-up (NVLink) domain that spans nodes (GB200 NVL72) against the same
// GPUs in two racks: the expected times are derived by hand in the comments from the figures of
// topologies/gb200-nvl72.json (NVIDIA datasheets), not read from stepcast's output.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/nccl_tuning.hpp"
#include "stepcast/topology/topology.hpp"

namespace nvl72_collectives_test {

using namespace stepcast;
using topology::CommTiers;
using topology::Topology;

namespace {
constexpr double kGBps = 1e9;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
Topology nvl72_racks(int trays) {
  return topology::load_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/gb200-nvl72.json", trays);
}
}  // namespace

TEST_SUITE("cost.nvl72_collectives") {
  TEST_CASE("an all-reduce between trays of one rack runs at NVLink speed, between two racks at NIC speed") {
    // Two racks (36 trays); S = 1 GiB; closed-form ring all-reduce over 2 ranks:
    // 2(N-1) x alpha + 2(N-1)/N x S / B with N = 2, i.e. 2 alpha + S / B (Patarasuk and Yuan 2009).
    const Topology t = nvl72_racks(36);
    const Bytes s(kGiB);
    // Inside the domain: GPU 0 (tray 0) and GPU 4 (tray 1). B = 900 GB/s (each GPU's NVLink to
    // the switch), alpha = two links of 1.7 us = 3.4 us.
    // t = 2 x 3.4 us + 1073741824 B / 900e9 B/s = 6.8 us + 1193.046 us = 1199.846 us.
    const CommTiers inside = t.tiers(2, 4);
    CHECK(inside.nodes == 1);
    const cost::CollectiveCost a =
        cost::estimate_collective(cost::CollectiveOp::kAllReduce, cost::Algorithm::kRing, s, inside);
    CHECK(a.time.value() == doctest::Approx(1199.846e-6).epsilon(1e-5));
    CHECK(a.bottleneck == cost::Bottleneck::kIntraNode);
    // Across the racks: GPU 0 and GPU 72 (stride 72). B = GPU 0's NIC, 400 Gb/s = 50 GB/s; alpha
    // = NIC link out (7 us) + rail switch to the other rack's NIC (7 us) = 14 us (both NICs are
    // NIC 0 of their rack, on rail 0, so no spine hop).
    // t = 2 x 14 us + 1073741824 B / 50e9 B/s = 28 us + 21474.836 us = 21502.836 us.
    const CommTiers across = t.tiers(2, 72);
    CHECK(across.nodes == 2);
    const cost::CollectiveCost b =
        cost::estimate_collective(cost::CollectiveOp::kAllReduce, cost::Algorithm::kRing, s, across);
    CHECK(b.time.value() == doctest::Approx(21502.836e-6).epsilon(1e-5));
    CHECK(b.bottleneck == cost::Bottleneck::kNodeNics);
  }

  TEST_CASE("NCCL's model sees NVLink SHARP inside an NVL72 domain, and NVLS-Tree across racks") {
    const Topology t = nvl72_racks(36);
    // Inside: 72 GPUs, each with round(900 / 50) = 18 NVLink 5 links of 40.1 GB/s as NCCL counts
    // them (topo.h SM100_NVLINK_BW) = 721.8 GB/s. NVLS: one channel per head GPU, at most
    // NCCL_MAX_NVLS_ARITY = 32 heads (search.cc), and (32 + 1) x speed must fit 721.8 GB/s:
    // speed <= 21.87 GB/s, and the fastest such speed of NCCL's sm90 list (60, 50, 40, 30, 24,
    // 20, 15, 12, 11, 6, 3) is 20 GB/s; pass 2 raises bwInter to the fastest up to 2 x 20: 40.
    const cost::CollectiveGroup rack = cost::collective_group(t, t.tiers(72));
    REQUIRE(rack.nccl.has_value());
    CHECK(rack.nccl->nvswitch);
    CHECK(rack.nccl->gpu_bw.value() == doctest::Approx(18 * 40.1 * kGBps));
    CHECK(rack.nccl->nvls_channels == 32);
    CHECK(rack.nccl->nvls_channel_bw.value() == doctest::Approx(20 * kGBps));
    CHECK(rack.nccl->nvls_inter_bw.value() == doctest::Approx(40 * kGBps));
    // A 1 GiB NVLS all-reduce (nvls.cc): per channel min(20 x 0.74 (Blackwell's NVLS efficiency)
    // x 31/32 x 2, 40) = 28.675 GB/s, 32 channels = 917.6 GB/s of bus bandwidth, times
    // nRanks / nSteps = 72 / 142: algbw 465.26 GB/s, plus NVLink's 25 us.
    const cost::NcclChoice ar = cost::nccl_choose(cost::CollectiveOp::kAllReduce, Bytes(kGiB), *rack.nccl);
    CHECK(ar.chosen().algorithm == cost::NcclAlgorithm::kNvls);
    CHECK(ar.chosen().algbw.value() == doctest::Approx(20 * 0.74 * 31.0 / 32.0 * 2 * 32 * 72.0 / 142.0 * kGBps));
    CHECK(ar.chosen().time.value() == doctest::Approx(25e-6 + kGiB / (465.26 * kGBps)).epsilon(1e-4));
    // NVLS all-gather and reduce-scatter run with at most 32 GPUs per node (nvls.cc): 72 is more.
    for (const auto op : {cost::CollectiveOp::kAllGather, cost::CollectiveOp::kReduceScatter}) {
      const cost::NcclChoice c = cost::nccl_choose(op, Bytes(kGiB), *rack.nccl);
      CHECK(c.chosen().algorithm != cost::NcclAlgorithm::kNvls);
      for (const cost::NcclCandidate& k : c.candidates) {
        if (k.algorithm == cost::NcclAlgorithm::kNvls)
          CHECK(k.disabled_because.find("at most 32 GPUs") != std::string::npos);
      }
    }
    // Across two racks NCCL runs NVLS only with CollNet (off, its default), but has NVLS-Tree:
    // one head per GPU with its own NIC, capped at 32; the fastest sm90 inter speed with
    // (32 + 1) x speed <= 721.8 and within the 50 GB/s NIC is 20 GB/s, and pass 2 raises
    // bwInter to the fastest up to 2 x 20 within the NIC: 40 (48, 45 and 42 are above it).
    const cost::CollectiveGroup two = cost::collective_group(t, t.tiers(144));
    REQUIRE(two.nccl.has_value());
    CHECK(two.nccl->nvls_channels == 32);
    CHECK(two.nccl->nvls_channel_bw.value() == doctest::Approx(20 * kGBps));
    CHECK(two.nccl->nvls_inter_bw.value() == doctest::Approx(40 * kGBps));
  }

  TEST_CASE("NVLS-Tree's tree correction on Blackwell is for x86 hosts: the racks' Grace (ARM) hosts go without") {
    // nvls.cc ncclTuningNvlsModelSim multiplies NVLS-Tree all-reduce's bandwidth by the tree
    // correction on Blackwell only where cpuArch is x86. Across two racks (above): per channel
    // min(20 x 0.74 x 31/32 x 2 = 28.675, bwInter 40 x 2 on two nodes, Blackwell's NVLS-Tree max 96)
    // = 28.675 GB/s x 32 channels x nRanks / nSteps = 144 / 286: 462.0 GB/s on the Grace hosts the
    // file states; on x86 hosts a 64 MiB all-reduce (2^20 x 64 B) takes Simple's 0.8 of it.
    const Topology t = nvl72_racks(36);
    const cost::CollectiveGroup two = cost::collective_group(t, t.tiers(144));
    REQUIRE(two.nccl.has_value());
    CHECK(two.nccl->host_cpu == topology::HostCpu::kArm);
    const auto nvls_tree = [](const cost::NcclSystem& s) {
      for (const cost::NcclCandidate& k :
           cost::nccl_choose(cost::CollectiveOp::kAllReduce, Bytes(64.0 * 1048576.0), s).candidates) {
        if (k.algorithm == cost::NcclAlgorithm::kNvlsTree) return k.algbw.value();
      }
      FAIL("no NVLS-Tree candidate");
      return 0.0;
    };
    const double arm = nvls_tree(*two.nccl);
    CHECK(arm == doctest::Approx(28.675 * 32 * 144.0 / 286.0 * kGBps));
    cost::NcclSystem x86 = *two.nccl;
    x86.host_cpu = topology::HostCpu::kIntel;
    CHECK(nvls_tree(x86) == doctest::Approx(0.8 * arm));
  }
}

}  // namespace nvl72_collectives_test
