// Collectives on a scale-up (NVLink) domain that spans nodes (GB200 NVL72) against the same
// GPUs in two racks: the expected times are derived by hand in the comments from the figures of
// topologies/gb200-nvl72.json (NVIDIA datasheets), not read from stepcast's output.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/topology/topology.hpp"

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
    // them (topo.h SM100_NVLINK_BW) = 721.8 GB/s. NVLS: one channel per GPU, (72 + 1) x speed must
    // fit 721.8 GB/s: speed <= 9.89 GB/s, and the fastest such speed of NCCL's SM90 list
    // (60, 50, 40, 30, 24, 20, 15, 12, 6, 3) is 6 GB/s.
    const cost::CollectiveGroup rack = cost::collective_group(t, t.tiers(72));
    REQUIRE(rack.nccl.has_value());
    CHECK(rack.nccl->nvswitch);
    CHECK(rack.nccl->gpu_bw.value() == doctest::Approx(18 * 40.1 * kGBps));
    CHECK(rack.nccl->nvls_channels == 72);
    CHECK(rack.nccl->nvls_channel_bw.value() == doctest::Approx(6 * kGBps));
    // Across two racks NCCL runs NVLS only with CollNet, which stepcast does not model, but has
    // NVLS-Tree: one head per GPU with its own NIC (72), the fastest sm90 inter speed with
    // (72 + 1) x speed <= 721.8 is again 6 GB/s, and pass 2 raises bwInter to 12 (< 2 x 6 + 12).
    const cost::CollectiveGroup two = cost::collective_group(t, t.tiers(144));
    REQUIRE(two.nccl.has_value());
    CHECK(two.nccl->nvls_channels == 72);
    CHECK(two.nccl->nvls_channel_bw.value() == doctest::Approx(6 * kGBps));
    CHECK(two.nccl->nvls_inter_bw.value() == doctest::Approx(12 * kGBps));
  }
}
