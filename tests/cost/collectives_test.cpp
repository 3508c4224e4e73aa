// Analytical collectives: the seed's worked check, hand-derived bytes, steps and times for every
// collective, nccl-tests' busbw, the 2 x p4d hierarchical case, and monotonicity properties.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/topology/topology.hpp"
#include "support/input_error_text.hpp"
#include "support/run_stepcast.hpp"

namespace collectives_test {

using namespace stepcast;
using namespace stepcast::cost;
using topology::CommTiers;

namespace {

// The seed's machine: every GPU alone on its node, on its own 400 Gbps (50e9 B/s) link to one
// switch, no latency (the seed's figures are ideal times).
CommTiers flat_400gbps(int ranks) {
  CommTiers t;
  t.ranks = ranks;
  t.nodes = ranks;
  t.ranks_per_node = 1;
  t.node_bw = gbit_per_s(400);
  t.gpu_nic_bw = gbit_per_s(400);
  return t;
}

// One node of `ranks` GPUs joined by `bw` each way, `alpha` per step.
CommTiers one_node(int ranks, BytesPerSecond bw, Seconds alpha) {
  CommTiers t;
  t.ranks = ranks;
  t.nodes = 1;
  t.ranks_per_node = ranks;
  t.intra_bw = bw;
  t.intra_latency = alpha;
  return t;
}

// p4d.24xlarge as the AWS deep dive gives it: 8 A100s on NVSwitch at 300 GB/s each way per GPU,
// 4 x 100 Gbps EFA = 50 GB/s per node; one 100 Gbps NIC per GPU pair = 12.5 GB/s per GPU route.
CommTiers p4d(int nodes, Seconds intra_latency, Seconds inter_latency) {
  CommTiers t;
  t.ranks = 8 * nodes;
  t.nodes = nodes;
  t.ranks_per_node = 8;
  t.intra_bw = gbyte_per_s(300);
  t.intra_latency = intra_latency;
  t.node_bw = gbit_per_s(400);
  t.gpu_nic_bw = gbit_per_s(100);
  t.inter_latency = inter_latency;
  return t;
}

std::string input_error(CollectiveOp op, Algorithm a, Bytes size, const CommTiers& t) {
  return test::input_error_text([&] { (void)estimate_collective(op, a, size, t); });
}

// A uniform double in [lo, hi) from the top 53 bits (std::*_distribution is
// implementation-defined, STYLE.md B6).
double uniform(std::mt19937_64& rng, double lo, double hi) {
  const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
  return lo + (hi - lo) * u;
}

struct Pair {
  CollectiveOp op;
  Algorithm algorithm;
};
constexpr std::array kEveryPair{
    Pair{CollectiveOp::kAllReduce, Algorithm::kRing},
    Pair{CollectiveOp::kAllReduce, Algorithm::kTree},
    Pair{CollectiveOp::kAllReduce, Algorithm::kHierarchical},
    Pair{CollectiveOp::kReduceScatter, Algorithm::kRing},
    Pair{CollectiveOp::kReduceScatter, Algorithm::kHierarchical},
    Pair{CollectiveOp::kAllGather, Algorithm::kRing},
    Pair{CollectiveOp::kAllGather, Algorithm::kHierarchical},
    Pair{CollectiveOp::kBroadcast, Algorithm::kRing},
    Pair{CollectiveOp::kBroadcast, Algorithm::kTree},
    Pair{CollectiveOp::kReduce, Algorithm::kRing},
    Pair{CollectiveOp::kReduce, Algorithm::kTree},
    Pair{CollectiveOp::kAllToAll, Algorithm::kDirect},
    Pair{CollectiveOp::kSendRecv, Algorithm::kDirect},
};

}  // namespace

TEST_SUITE("cost.collectives") {
  TEST_CASE("seed check: ring all-reduce of 14e9 B on 400 Gbps links, N = 2, 4, 8, 16") {
    // The seed (../shared/seeds/distributed-model-training.txt): 7e9 params x 2 bytes = 14e9 B;
    // transfer per GPU 2(N-1)/N x 14e9 B in GiB, ideal time that / 50e9 B/s:
    //   N=2: 14e9 B = 13.04 GiB, 0.280 s     N=4: 21e9 B = 19.56 GiB, 0.420 s
    //   N=8: 24.5e9 B = 22.82 GiB, 0.490 s   N=16: 26.25e9 B = 24.45 GiB, 0.525 s
    struct Row {
      int ranks;
      const char* transfer;
      const char* time;
    };
    for (const Row& row : {Row{2, "13.04 GiB", "0.280 s"}, Row{4, "19.56 GiB", "0.420 s"},
                           Row{8, "22.82 GiB", "0.490 s"}, Row{16, "24.45 GiB", "0.525 s"}}) {
      CAPTURE(row.ranks);
      const CollectiveCost c =
          estimate_collective(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(14e9), flat_400gbps(row.ranks));
      CHECK(format_bytes(c.bytes_sent_per_rank) == row.transfer);
      CHECK(format_seconds(c.time) == row.time);
      CHECK(c.bottleneck == Bottleneck::kNodeNics);
    }
    CHECK(format_bytes(bytes(14e9)) == "13.04 GiB");
  }

  TEST_CASE("seed check through the shipped flat-400gbps topology file") {
    const topology::Topology topo = topology::load_topology(STEPCAST_SOURCE_DIR "/topologies/flat-400gbps.json");
    struct Row {
      int ranks;
      const char* transfer;
      const char* time;
    };
    for (const Row& row : {Row{2, "13.04 GiB", "0.280 s"}, Row{4, "19.56 GiB", "0.420 s"},
                           Row{8, "22.82 GiB", "0.490 s"}, Row{16, "24.45 GiB", "0.525 s"}}) {
      CAPTURE(row.ranks);
      const CollectiveCost c =
          estimate_collective(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(14e9), topo.tiers(row.ranks));
      CHECK(format_bytes(c.bytes_sent_per_rank) == row.transfer);
      CHECK(format_seconds(c.time) == row.time);
    }
  }

  TEST_CASE("hierarchical all-reduce through the shipped p4d-24xlarge file") {
    // The file: 300 GB/s NVSwitch per GPU with 1.7 us per link (a GPU-switch-GPU route crosses
    // two: intra_latency 3.4 us), 4 x 100 Gbps NICs (node_bw 50e9 B/s) with 7 us per NIC link
    // (GPU-NIC-switch-NIC-GPU crosses two: inter_latency 14 us), 2 nodes by default.
    //   bandwidth: 2 x 7/8 x 14e9 / 300e9 + 2 x 1/2 x 14e9 / 50e9 = 0.0816667 + 0.28 s
    //   latency: 14 x 3.4 us + 2 x 14 us = 47.6 + 28 = 75.6 us       -> 0.3617423 s
    const topology::Topology topo = topology::load_topology(STEPCAST_SOURCE_DIR "/topologies/p4d-24xlarge.json");
    const CollectiveCost c =
        estimate_collective(CollectiveOp::kAllReduce, Algorithm::kHierarchical, bytes(14e9), topo.tiers(16));
    CHECK(c.latency_time.value() == doctest::Approx(75.6e-6));
    CHECK(c.time.value() == doctest::Approx(24.5e9 / 300e9 + 0.28 + 75.6e-6));
  }

  TEST_CASE("CLI: stepcast collective --json prints the seed's 0.525 s for N = 16") {
    // 2 x 15/16 x 14e9 B / 50e9 B/s = 0.525 s; busbw = the link's 50 GB/s; 30 steps.
    const nlohmann::json j = nlohmann::json::parse(stepcast::test::run_stepcast(
        "collective --op all-reduce --algorithm ring --size '14e9 B' --ranks 16 --topology " STEPCAST_SOURCE_DIR
        "/topologies/flat-400gbps.json --json"));
    CHECK(j.at("time_s").get<double>() == 0.525);
    CHECK(j.at("bytes_sent_per_rank").get<double>() == 26.25e9);
    CHECK(j.at("steps").get<int>() == 30);
    CHECK(j.at("busbw_GBps").get<double>() == 50.0);
    CHECK(j.at("algbw_GBps").get<double>() == doctest::Approx(14.0 / 0.525));
    CHECK(j.at("op").get<std::string>() == "all-reduce");
    CHECK(j.at("size_bytes").get<double>() == 14e9);
  }

  TEST_CASE("CLI: --sizes 1MiB:16GiB sweeps by factor 2, 15 sizes, like nccl-tests -b 1M -e 16G -f 2") {
    // 2^20, 2^21, ..., 2^34 B: 15 sizes; the last is 16 GiB = 17179869184 B.
    const nlohmann::json j = nlohmann::json::parse(
        stepcast::test::run_stepcast("collective --op all-gather --sizes 1MiB:16GiB --topology " STEPCAST_SOURCE_DIR
                                     "/topologies/flat-400gbps.json --json"));
    REQUIRE(j.at("results").size() == 15);
    CHECK(j.at("results").front().at("size_bytes").get<double>() == 1048576.0);
    CHECK(j.at("results").back().at("size_bytes").get<double>() == 17179869184.0);
    CHECK(j.at("ranks").get<int>() == 16);
  }

  TEST_CASE("ring all-reduce: 2(N-1)/N x S bytes in 2(N-1) steps at N = 2, 3, 8, 1024") {
    // S = 6e6 B. 2(N-1)/N x S: N=2 -> 6e6; N=3 -> 4/3 x 6e6 = 8e6; N=8 -> 14/8 x 6e6 = 10.5e6;
    // N=1024 -> 2046/1024 x 6e6 = 11988281.25.
    struct Row {
      int n;
      double bytes;
      int steps;
    };
    for (const Row& r : {Row{2, 6e6, 2}, Row{3, 8e6, 4}, Row{8, 10.5e6, 14}, Row{1024, 11988281.25, 2046}}) {
      CAPTURE(r.n);
      const CollectiveCost c =
          estimate_collective(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(6e6), flat_400gbps(r.n));
      CHECK(c.bytes_sent_per_rank.value() == doctest::Approx(r.bytes));
      CHECK(c.steps == r.steps);
    }
  }

  TEST_CASE("ring reduce-scatter and all-gather: (N-1)/N x S bytes in N-1 steps") {
    // (N-1)/N x 6e6: N=2 -> 3e6; N=3 -> 4e6; N=8 -> 5.25e6; N=1024 -> 1023/1024 x 6e6 = 5994140.625.
    struct Row {
      int n;
      double bytes;
      int steps;
    };
    for (CollectiveOp op : {CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
      for (const Row& r : {Row{2, 3e6, 1}, Row{3, 4e6, 2}, Row{8, 5.25e6, 7}, Row{1024, 5994140.625, 1023}}) {
        CAPTURE(r.n);
        const CollectiveCost c = estimate_collective(op, Algorithm::kRing, bytes(6e6), flat_400gbps(r.n));
        CHECK(c.bytes_sent_per_rank.value() == doctest::Approx(r.bytes));
        CHECK(c.steps == r.steps);
      }
    }
  }

  TEST_CASE("ring broadcast and reduce: a pipelined chain, S bytes, N-1 steps, (N-1) alpha + S/B") {
    for (CollectiveOp op : {CollectiveOp::kBroadcast, CollectiveOp::kReduce}) {
      for (int n : {2, 3, 8, 1024}) {
        CAPTURE(n);
        const CollectiveCost c = estimate_collective(op, Algorithm::kRing, bytes(6e6), flat_400gbps(n));
        CHECK(c.bytes_sent_per_rank.value() == doctest::Approx(6e6));
        CHECK(c.steps == n - 1);
      }
    }
    // One node, 8 GPUs at 100 GB/s, 2 us per step: 7 x 2 us + 1e9 B / 100e9 B/s = 14 us + 10 ms.
    const CollectiveCost c = estimate_collective(CollectiveOp::kBroadcast, Algorithm::kRing, bytes(1e9),
                                                 one_node(8, gbyte_per_s(100), microseconds(2)));
    CHECK(c.time.value() == doctest::Approx(0.010014));
  }

  TEST_CASE("tree all-reduce: 2(N-1)/N x S bytes on average, 2 ceil(log2 N) steps") {
    // Depth ceil(log2 N): N=2 -> 1, N=3 -> 2, N=8 -> 3, N=1024 -> 10; steps twice that.
    struct Row {
      int n;
      double bytes;
      int steps;
    };
    for (const Row& r : {Row{2, 6e6, 2}, Row{3, 8e6, 4}, Row{8, 10.5e6, 6}, Row{1024, 11988281.25, 20}}) {
      CAPTURE(r.n);
      const CollectiveCost c =
          estimate_collective(CollectiveOp::kAllReduce, Algorithm::kTree, bytes(6e6), flat_400gbps(r.n));
      CHECK(c.bytes_sent_per_rank.value() == doctest::Approx(r.bytes));
      CHECK(c.steps == r.steps);
    }
    // Latency: on 1024 ranks with 5 us per step, the tree's 20 steps cost 100 us, the ring's
    // 2046 steps 10.23 ms; bandwidth terms are equal (11988281.25 B / 50e9 B/s = 239.765625 us).
    CommTiers t = flat_400gbps(1024);
    t.inter_latency = microseconds(5);
    const CollectiveCost tree = estimate_collective(CollectiveOp::kAllReduce, Algorithm::kTree, bytes(6e6), t);
    const CollectiveCost ring = estimate_collective(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(6e6), t);
    CHECK(tree.time.value() == doctest::Approx(100e-6 + 239.765625e-6));
    CHECK(ring.time.value() == doctest::Approx(10.23e-3 + 239.765625e-6));
  }

  TEST_CASE("tree broadcast and reduce: S bytes on the busiest rank, ceil(log2 N) steps") {
    struct Row {
      int n;
      int steps;
    };
    for (CollectiveOp op : {CollectiveOp::kBroadcast, CollectiveOp::kReduce}) {
      for (const Row& r : {Row{2, 1}, Row{3, 2}, Row{8, 3}, Row{1024, 10}}) {
        CAPTURE(r.n);
        const CollectiveCost c = estimate_collective(op, Algorithm::kTree, bytes(6e6), flat_400gbps(r.n));
        CHECK(c.bytes_sent_per_rank.value() == doctest::Approx(6e6));
        CHECK(c.steps == r.steps);
      }
    }
  }

  TEST_CASE("all-to-all: (N-1)/N x S bytes in N-1 pairwise steps") {
    struct Row {
      int n;
      double bytes;
    };
    for (const Row& r : {Row{2, 3e6}, Row{3, 4e6}, Row{8, 5.25e6}, Row{1024, 5994140.625}}) {
      CAPTURE(r.n);
      const CollectiveCost c =
          estimate_collective(CollectiveOp::kAllToAll, Algorithm::kDirect, bytes(6e6), flat_400gbps(r.n));
      CHECK(c.bytes_sent_per_rank.value() == doctest::Approx(r.bytes));
      CHECK(c.steps == r.n - 1);
    }
  }

  TEST_CASE("all-to-all across nodes: the node's GPUs share its NICs, oversubscription divides them") {
    // 2 x p4d, S = 16e9 B, no latency. Intra part (g-1)/N x S / 300e9 = 7/16 x 16e9 / 300e9
    // = 0.0233333 s. Inter part g(N-g)/N x S / 50e9 = 8 x 8/16 x 16e9 / 50e9 = 1.28 s.
    const CollectiveCost c =
        estimate_collective(CollectiveOp::kAllToAll, Algorithm::kDirect, bytes(16e9), p4d(2, {}, {}));
    CHECK(c.time.value() == doctest::Approx(1.28));
    CHECK(c.bottleneck == Bottleneck::kNodeNics);
    // A 2:1 oversubscribed core halves the node's rate: 2.56 s.
    CommTiers over = p4d(2, {}, {});
    over.oversubscription = 2.0;
    CHECK(estimate_collective(CollectiveOp::kAllToAll, Algorithm::kDirect, bytes(16e9), over).time.value() ==
          doctest::Approx(2.56));
    // One node of 8: 7/8 x 16e9 / 300e9 = 0.0466667 s, bounded by NVSwitch.
    const CollectiveCost one = estimate_collective(CollectiveOp::kAllToAll, Algorithm::kDirect, bytes(16e9),
                                                   one_node(8, gbyte_per_s(300), {}));
    CHECK(one.time.value() == doctest::Approx(7.0 / 8.0 * 16e9 / 300e9));
    CHECK(one.bottleneck == Bottleneck::kIntraNode);
  }

  TEST_CASE("send/recv: S bytes in one step, across nodes through the GPU's own NIC route") {
    for (int n : {2, 3, 8, 1024}) {
      CAPTURE(n);
      const CollectiveCost c =
          estimate_collective(CollectiveOp::kSendRecv, Algorithm::kDirect, bytes(6e6), flat_400gbps(n));
      CHECK(c.bytes_sent_per_rank.value() == doctest::Approx(6e6));
      CHECK(c.steps == 1);
    }
    // 2 x p4d: a GPU's route out of its node is its pair's 100 Gbps NIC, 12.5e9 B/s, plus one
    // 10 us step: 1e9 B / 12.5e9 B/s + 10 us = 0.08001 s.
    const CollectiveCost c = estimate_collective(CollectiveOp::kSendRecv, Algorithm::kDirect, bytes(1e9),
                                                 p4d(2, microseconds(3), microseconds(10)));
    CHECK(c.time.value() == doctest::Approx(0.08001));
    CHECK(c.bottleneck == Bottleneck::kGpuNic);
  }

  TEST_CASE("hierarchical all-reduce on 2 x p4d: intra reduce-scatter, inter ring, intra all-gather") {
    // g = 8, n = 2, intra_bw 300e9 B/s, node_bw 50e9 B/s, S = 14e9 B, alpha 3 us intra, 10 us inter.
    //   intra: 2(g-1)/g x S / intra_bw = 2 x 7/8 x 14e9 / 300e9 = 24.5e9 / 300e9 = 0.0816667 s
    //   inter: 2(n-1)/n x S / node_bw = 2 x 1/2 x 14e9 / 50e9 = 0.28 s
    //   latency: 2(g-1) x 3 us + 2(n-1) x 10 us = 14 x 3 us + 2 x 10 us = 62 us
    //   time = 0.0816667 + 0.28 + 0.000062 = 0.3617287 s
    //   bytes per rank: 2(g-1)/g x S + 2(n-1)/n x S/g = 24.5e9 + 14e9/8 = 26.25e9 B; steps 14 + 2 = 16
    const CommTiers t = p4d(2, microseconds(3), microseconds(10));
    const CollectiveCost h = estimate_collective(CollectiveOp::kAllReduce, Algorithm::kHierarchical, bytes(14e9), t);
    CHECK(h.bandwidth_time.value() == doctest::Approx(24.5e9 / 300e9 + 0.28));
    CHECK(h.latency_time.value() == doctest::Approx(62e-6));
    CHECK(h.time.value() == doctest::Approx(0.3617287).epsilon(1e-6));
    CHECK(h.bytes_sent_per_rank.value() == doctest::Approx(26.25e9));
    CHECK(h.steps == 16);
    CHECK(h.bottleneck == Bottleneck::kNodeNics);
    // The flat ring on the same 16 GPUs is held to the NICs for every byte:
    // 2 x 15/16 x 14e9 / 50e9 = 0.525 s plus 30 x 10 us = 0.5253 s.
    const CollectiveCost ring = estimate_collective(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(14e9), t);
    CHECK(ring.time.value() == doctest::Approx(0.5253));
    CHECK(h.time < ring.time);
  }

  TEST_CASE("hierarchical reduce-scatter and all-gather: one intra phase and one inter phase") {
    // 4 x p4d (g = 8, n = 4), S = 32e9 B, no latency:
    //   (g-1)/g x S / 300e9 = 28e9 / 300e9 = 0.0933333 s; (n-1)/n x S / 50e9 = 24e9 / 50e9 = 0.48 s
    //   bytes per rank 28e9 + 24e9 / 8 = 31e9 B; steps 7 + 3 = 10.
    for (CollectiveOp op : {CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
      const CollectiveCost c = estimate_collective(op, Algorithm::kHierarchical, bytes(32e9), p4d(4, {}, {}));
      CHECK(c.time.value() == doctest::Approx(28e9 / 300e9 + 0.48));
      CHECK(c.bytes_sent_per_rank.value() == doctest::Approx(31e9));
      CHECK(c.steps == 10);
    }
  }

  TEST_CASE("hierarchical over 1024 ranks: 128 nodes of 8") {
    // bytes 2 x 7/8 x 6e6 + 2 x 127/128 x 6e6 / 8 = 10.5e6 + 1488281.25 = 11988281.25 B
    // (the flat ring's figure: the same data, moved in two tiers); steps 2 x 7 + 2 x 127 = 268.
    const CollectiveCost c =
        estimate_collective(CollectiveOp::kAllReduce, Algorithm::kHierarchical, bytes(6e6), p4d(128, {}, {}));
    CHECK(c.bytes_sent_per_rank.value() == doctest::Approx(11988281.25));
    CHECK(c.steps == 268);
  }

  TEST_CASE("busbw = algbw x nccl-tests' factor, and equals the bottleneck bandwidth without latency") {
    // nccl-tests doc/PERFORMANCE.md: busbw factors 2(n-1)/n, (n-1)/n, 1. With no latency the ring
    // time is factor x S / B, so algbw = S / time = B / factor and busbw = B: the link's 50 GB/s.
    const CollectiveCost ar =
        estimate_collective(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(14e9), flat_400gbps(16));
    // algbw = 14e9 / 0.525 = 26.6667e9 B/s; busbw = x 30/16 = 50e9 B/s.
    CHECK(ar.algbw.value() == doctest::Approx(14e9 / 0.525));
    CHECK(ar.busbw.value() == doctest::Approx(50e9));
    CHECK(format_bandwidth(ar.busbw) == "50.00 GB/s");
    for (const Pair& p : kEveryPair) {
      CAPTURE(to_string(p.op));
      CAPTURE(to_string(p.algorithm));
      const CommTiers t = p.op == CollectiveOp::kAllToAll || p.algorithm == Algorithm::kHierarchical
                              ? one_node(8, gbyte_per_s(50), {})
                              : flat_400gbps(8);
      const CollectiveCost c = estimate_collective(p.op, p.algorithm, bytes(1e9), t);
      CHECK(c.busbw.value() == doctest::Approx(c.algbw.value() * busbw_factor(p.op, 8)));
      CHECK(c.busbw.value() == doctest::Approx(50e9));
    }
  }

  TEST_CASE("busbw factors of nccl-tests at N = 2, 3, 8, 1024") {
    CHECK(busbw_factor(CollectiveOp::kAllReduce, 2) == doctest::Approx(1.0));
    CHECK(busbw_factor(CollectiveOp::kAllReduce, 3) == doctest::Approx(4.0 / 3.0));
    CHECK(busbw_factor(CollectiveOp::kAllReduce, 8) == doctest::Approx(1.75));
    CHECK(busbw_factor(CollectiveOp::kAllReduce, 1024) == doctest::Approx(2046.0 / 1024.0));
    CHECK(busbw_factor(CollectiveOp::kAllGather, 8) == doctest::Approx(0.875));
    CHECK(busbw_factor(CollectiveOp::kReduceScatter, 3) == doctest::Approx(2.0 / 3.0));
    CHECK(busbw_factor(CollectiveOp::kAllToAll, 1024) == doctest::Approx(1023.0 / 1024.0));
    for (CollectiveOp op : {CollectiveOp::kBroadcast, CollectiveOp::kReduce, CollectiveOp::kSendRecv}) {
      CHECK(busbw_factor(op, 8) == 1.0);
    }
  }

  TEST_CASE("one rank: nothing moves, time 0, no division by zero") {
    for (const Pair& p : kEveryPair) {
      CAPTURE(to_string(p.op));
      const CollectiveCost c =
          estimate_collective(p.op, p.algorithm, bytes(1e9), one_node(1, gbyte_per_s(300), microseconds(2)));
      CHECK(c.time.value() == 0.0);
      CHECK(c.steps == 0);
      CHECK(c.bytes_sent_per_rank.value() == 0.0);
      CHECK(c.algbw.value() == 0.0);
      CHECK(c.busbw.value() == 0.0);
      CHECK(c.bottleneck == Bottleneck::kNone);
    }
  }

  TEST_CASE("latency: one node pays intra_latency per step, several nodes inter_latency") {
    // Ring all-reduce, S = 0: time = 2(N-1) x alpha. One p4d node: 14 x 3 us = 42 us;
    // two nodes: 30 x 10 us = 300 us.
    CommTiers one = p4d(1, microseconds(3), microseconds(10));
    CHECK(estimate_collective(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(0), one).time.value() ==
          doctest::Approx(42e-6));
    CHECK(estimate_collective(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(0),
                              p4d(2, microseconds(3), microseconds(10)))
              .time.value() == doctest::Approx(300e-6));
  }

  TEST_CASE("property: more bandwidth never adds time") {
    const std::uint64_t seed = 20240601;
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 300; ++trial) {
      CAPTURE(seed);
      CAPTURE(trial);
      CommTiers t;
      t.nodes = 1 + static_cast<int>(rng() % 16);
      t.ranks_per_node = 1 + static_cast<int>(rng() % 8);
      t.ranks = t.nodes * t.ranks_per_node;
      t.intra_bw = gbyte_per_s(uniform(rng, 10, 900));
      t.node_bw = gbyte_per_s(uniform(rng, 10, 400));
      t.gpu_nic_bw = gbyte_per_s(uniform(rng, 5, 100));
      t.intra_latency = microseconds(uniform(rng, 0, 5));
      t.inter_latency = microseconds(uniform(rng, 0, 20));
      t.oversubscription = uniform(rng, 1, 4);
      const Bytes size = bytes(uniform(rng, 0, 1e10));
      const double more = uniform(rng, 1, 3);
      for (const Pair& p : kEveryPair) {
        CAPTURE(to_string(p.op));
        CAPTURE(to_string(p.algorithm));
        const Seconds base = estimate_collective(p.op, p.algorithm, size, t).time;
        for (int field = 0; field < 4; ++field) {
          CommTiers faster = t;
          if (field == 0) faster.intra_bw *= more;
          if (field == 1) faster.node_bw *= more;
          if (field == 2) faster.gpu_nic_bw *= more;
          if (field == 3) faster.oversubscription = 1.0 + (t.oversubscription - 1.0) / more;
          CAPTURE(field);
          CHECK(estimate_collective(p.op, p.algorithm, size, faster).time <= base);
        }
      }
    }
  }

  TEST_CASE("property: time is monotonic in bytes") {
    const std::uint64_t seed = 7;
    std::mt19937_64 rng(seed);
    for (int trial = 0; trial < 300; ++trial) {
      CAPTURE(seed);
      CAPTURE(trial);
      const CommTiers t =
          p4d(1 + static_cast<int>(rng() % 8), microseconds(uniform(rng, 0, 5)), microseconds(uniform(rng, 0, 20)));
      const Bytes small = bytes(uniform(rng, 0, 1e10));
      const Bytes large = small + bytes(uniform(rng, 0, 1e10));
      for (const Pair& p : kEveryPair) {
        CAPTURE(to_string(p.op));
        CHECK(estimate_collective(p.op, p.algorithm, small, t).time <=
              estimate_collective(p.op, p.algorithm, large, t).time);
      }
    }
  }

  TEST_CASE("explain_collective: the terms carry the numbers, estimate_collective leaves them out") {
    const CollectiveCost quick =
        estimate_collective(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(14e9), flat_400gbps(16));
    const CollectiveCost c =
        explain_collective(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(14e9), flat_400gbps(16));
    CHECK(quick.explanation.empty());
    CHECK(c.time == quick.time);
    CHECK(c.bytes_sent_per_rank == quick.bytes_sent_per_rank);
    bool saw_bandwidth = false, saw_bytes = false;
    for (const ExplainTerm& term : c.explanation) {
      if (term.label == "bandwidth term") {
        saw_bandwidth = true;
        CHECK(term.value == "0.525 s");
        CHECK(term.formula == "bytes sent per rank / B = 26250000000 B / 50.00 GB/s");
      }
      if (term.label == "bytes sent per rank") {
        saw_bytes = true;
        CHECK(term.formula == "2(N-1)/N x S = 1.875 x 14000000000 B");
        CHECK(term.value == "24.45 GiB (26250000000 B)");
      }
    }
    CHECK(saw_bandwidth);
    CHECK(saw_bytes);
  }

  TEST_CASE("bad requests are InputErrors that list what is accepted") {
    CHECK(input_error(CollectiveOp::kAllGather, Algorithm::kTree, bytes(1), flat_400gbps(4)) ==
          "algorithm \"tree\" is not modelled for all-gather; all-gather accepts: ring, hierarchical");
    CHECK(input_error(CollectiveOp::kAllToAll, Algorithm::kRing, bytes(1), flat_400gbps(4)) ==
          "algorithm \"ring\" is not modelled for all-to-all; all-to-all accepts: direct");
    CHECK(input_error(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(-1), flat_400gbps(4)) ==
          "the size must be a finite number of bytes >= 0, got -1 B");
    CommTiers none = flat_400gbps(4);
    none.ranks = 0;
    CHECK(input_error(CollectiveOp::kAllReduce, Algorithm::kRing, bytes(1), none) ==
          "a collective needs at least 1 rank, got 0");
    CommTiers uneven = p4d(2, {}, {});
    uneven.ranks = 12;
    CHECK(input_error(CollectiveOp::kAllReduce, Algorithm::kHierarchical, bytes(1), uneven) ==
          "a hierarchical all-reduce needs the same number of ranks on every node; 12 ranks over 2 nodes do not divide "
          "evenly (use a ring, or a rank count that fills whole nodes)");
  }

  TEST_CASE("names: the command line's spellings and nccl-tests' round-trip") {
    for (CollectiveOp op : all_collective_ops()) {
      CHECK(parse_collective_op(to_string(op)) == op);
      for (Algorithm a : algorithms_for(op)) {
        CHECK(parse_algorithm(to_string(a)) == a);
        CHECK(is_supported(op, a));
      }
    }
    CHECK(parse_collective_op("all_reduce") == CollectiveOp::kAllReduce);
    CHECK(parse_collective_op("alltoall") == CollectiveOp::kAllToAll);
    CHECK(parse_collective_op("sendrecv") == CollectiveOp::kSendRecv);
    CHECK_FALSE(parse_collective_op("allreduce-ish").has_value());
    CHECK_FALSE(parse_algorithm("butterfly").has_value());
    CHECK(accepted_collective_ops() ==
          "all-reduce, reduce-scatter, all-gather, broadcast, reduce, all-to-all, send-recv");
    CHECK(accepted_algorithms() == "ring, tree, hierarchical, direct");
  }
}

}  // namespace collectives_test
