// The SMs a collective holds while it runs: NCCL launches one thread block per channel (NCCL's
// enqueue.cc, topoGetAlgoInfo: nc blocks of the algorithm's channels), and each block holds an SM
// the compute beside the call cannot use. The channel counts are NCCL's, derived by hand in
// tests/cost/nccl_tuning_test.cpp for the same topologies.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/collective_model.hpp"
#include "stepcast/topology/topology.hpp"

namespace collective_blocks_test {

using namespace stepcast;
using namespace stepcast::cost;

namespace {

topology::Topology shipped(const char* file, int nodes) {
  return topology::load_topology(std::string(STEPCAST_SOURCE_DIR "/topologies/") + file, nodes);
}

CollectivePrice priced(const topology::Topology& topo, int ranks, CollectiveOp op, Bytes size,
                       const CollectiveModel& model = {}) {
  return price_collective(collective_group(topo, topo.tiers(ranks, 1)), op, size, model);
}

}  // namespace

TEST_SUITE("cost.collective_blocks") {
  TEST_CASE("one DGX H100: a ring all-gather runs 24 blocks (12 ring channels, doubled twice over), NVLS 8") {
    // NCCL's ring graph on the node: 12 channels of 30 GB/s; connect.cc duplicates them, and again
    // on Hopper above 45 GB/s a GPU: 24. The NVLS graph has one channel per head GPU: 8.
    const topology::Topology topo = shipped("dgx-h100.json", 1);
    const CollectivePrice gather = priced(topo, 8, CollectiveOp::kAllGather, Bytes(1 << 30));
    REQUIRE(gather.nccl.has_value());
    CHECK(gather.nccl->algorithm == NcclAlgorithm::kRing);
    CHECK(gather.blocks == 24);
    // 1 GiB all-reduce: NVLS/Simple wins (nccl_tuning_test), on the NVLS graph's 8 channels.
    const CollectivePrice reduce = priced(topo, 8, CollectiveOp::kAllReduce, Bytes(1 << 30));
    REQUIRE(reduce.nccl.has_value());
    CHECK(reduce.nccl->algorithm == NcclAlgorithm::kNvls);
    CHECK(reduce.blocks == 8);
  }

  TEST_CASE("point to point: a send runs on its peer's channels, an all-to-all on the communicator's") {
    const topology::Topology topo = shipped("dgx-h100.json", 1);
    const CollectivePrice send = priced(topo, 2, CollectiveOp::kSendRecv, Bytes(64 << 20));
    const CollectivePrice all = priced(topo, 8, CollectiveOp::kAllToAll, Bytes(64 << 20));
    REQUIRE(send.p2p.has_value());
    CHECK(send.blocks == send.p2p->channels_per_peer);
    CHECK(all.blocks == 24);
  }

  TEST_CASE("a closed form names no NCCL kernel: it holds no SMs") {
    const topology::Topology topo = shipped("dgx-h100.json", 1);
    CollectiveModel ring;
    ring.closed_form = Algorithm::kRing;
    CHECK(priced(topo, 8, CollectiveOp::kAllGather, Bytes(1 << 30), ring).blocks == 0);
  }

  TEST_CASE("the share of the SMs: blocks over the SM count, at least one SM left to the compute") {
    CHECK(sm_share(24, 132) == doctest::Approx(24.0 / 132.0));
    CHECK(sm_share(0, 132) == 0.0);
    CHECK(sm_share(200, 132) == doctest::Approx(131.0 / 132.0));
  }
}

}  // namespace collective_blocks_test
