// Collectives of a plan on 64 of each GB200 NVL72 rack's 72 GPUs (--gpus-per-domain 64), as
// NVIDIA's Megatron-Bridge runs of 128 and 256 GPUs used them. Expected times are derived by hand
// in the comments from the figures of topologies/gb200-nvl72.json (900 GB/s of NVLink each way
// per GPU, 1.7 us per NVLink hop, one 400 Gb/s NIC per GPU, 7 us per NIC link) and NCCL's
// constants, not read from stepcast's output.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/nccl_tuning.hpp"
#include "stepcast/topology/overrides.hpp"
#include "stepcast/topology/topology.hpp"

namespace partial_domain_collectives_test {

using namespace stepcast;
using topology::CommTiers;
using topology::Topology;

namespace {
constexpr double kGBps = 1e9;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// 256 GPUs: 4 racks, 64 GPUs (16 trays) of each.
Topology four_racks_of_64() {
  topology::TopologyRequest r;
  r.gpus = 256;
  r.gpus_per_domain = 64;
  return topology::load_selected_topology(std::string(STEPCAST_SOURCE_DIR) + "/topologies/gb200-nvl72.json", r)
      .topology;
}
}  // namespace

TEST_SUITE("cost.partial_domain_collectives") {
  TEST_CASE("a ring all-reduce over the 64 GPUs of one domain runs on NVLink: busbw 889.86 GB/s at 16 GiB") {
    // N = 64, S = 16 GiB = 17179869184 B, B = 900 GB/s (each GPU's link to the NVLink switch),
    // alpha = two hops of 1.7 us = 3.4 us. Ring (Patarasuk and Yuan 2009): 2(N-1) = 126 steps,
    // 2(N-1)/N x S = 1.96875 x S sent per rank.
    // t = 126 x 3.4 us + 1.96875 x 17179869184 B / 900e9 B/s = 0.4284 ms + 37.58096 ms = 38.00936 ms
    // busbw = S / t x 2(N-1)/N (nccl-tests PERFORMANCE.md) = 451.99 GB/s x 1.96875 = 889.86 GB/s.
    const Topology t = four_racks_of_64();
    const CommTiers domain = t.tiers(64);
    const cost::CollectiveCost c =
        cost::estimate_collective(cost::CollectiveOp::kAllReduce, cost::Algorithm::kRing, Bytes(16 * kGiB), domain);
    CHECK(c.nodes == 1);
    CHECK(c.bottleneck == cost::Bottleneck::kIntraNode);
    CHECK(c.time.value() == doctest::Approx(38.00936e-3).epsilon(1e-5));
    CHECK(c.busbw.value() == doctest::Approx(889.86 * kGBps).epsilon(1e-4));
  }

  TEST_CASE("the dp ring across the 4 racks runs at one NIC's 50 GB/s") {
    // GPUs 0, 64, 128, 192: NIC 0 of each rack, all on rail 0, so alpha = 7 us out + 7 us in = 14 us;
    // B = 400 Gb/s = 50 GB/s. N = 4, S = 1 GiB: 2(N-1) = 6 steps, 1.5 x S per rank.
    // t = 6 x 14 us + 1.5 x 1073741824 B / 50e9 B/s = 84 us + 32212.255 us = 32296.255 us.
    const Topology t = four_racks_of_64();
    const CommTiers dp = t.tiers(4, 64);
    CHECK(dp.nodes == 4);
    const cost::CollectiveCost c =
        cost::estimate_collective(cost::CollectiveOp::kAllReduce, cost::Algorithm::kRing, Bytes(kGiB), dp);
    CHECK(c.bottleneck == cost::Bottleneck::kNodeNics);
    CHECK(c.time.value() == doctest::Approx(32296.255e-6).epsilon(1e-5));
  }

  TEST_CASE("NCCL's model sees a 64-GPU NVLink domain: NVLS all-reduce at 917.6 GB/s of bus bandwidth") {
    // 64 GPUs, each with round(900 / 50) = 18 NVLink 5 links of 40.1 GB/s as NCCL counts them
    // (topo.h SM100_NVLINK_BW) = 721.8 GB/s. NVLS: one channel per head GPU, at most
    // NCCL_MAX_NVLS_ARITY = 32 heads (search.cc): 64 GPUs give 32, and (32 + 1) x speed <= 721.8
    // GB/s picks 20 GB/s from NCCL's sm90 speeds. A 1 GiB NVLS all-reduce (nvls.cc): per channel
    // min(20 x 0.74 x 31/32 x 2, 40) = 28.675 GB/s, x 32 channels = 917.6 GB/s of bus bandwidth;
    // algbw = busbw x N / (2(N-1)) = 917.6 x 64 / 126.
    const Topology t = four_racks_of_64();
    const cost::CollectiveGroup domain = cost::collective_group(t, t.tiers(64));
    REQUIRE(domain.nccl.has_value());
    CHECK(domain.nccl->nvswitch);
    CHECK(domain.nccl->nvls_channels == 32);
    CHECK(domain.nccl->nvls_channel_bw.value() == doctest::Approx(20 * kGBps));
    const cost::NcclChoice ar = cost::nccl_choose(cost::CollectiveOp::kAllReduce, Bytes(kGiB), *domain.nccl);
    CHECK(ar.chosen().algorithm == cost::NcclAlgorithm::kNvls);
    CHECK(ar.chosen().algbw.value() == doctest::Approx(20 * 0.74 * 31.0 / 32.0 * 2 * 32 * 64.0 / 126.0 * kGBps));
  }
}

}  // namespace partial_domain_collectives_test
