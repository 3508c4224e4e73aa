// NCCL's CollNet (network SHARP) in the tuning model: the CollNet graphs of the channel search and
// the candidates' latency and bandwidth, each hand-derived below from NVIDIA/nccl
// src/tuning/collnet.cc and nvls.cc (collnet.cc at commit 1fc949c5, nvls.cc at 12df1a11), the
// constants of cost_model.cc (1fc949c5: CollNet Direct hwLat NVLink/PCI 3.7, network 31; Chain
// 2.8 and 30; no base latency), src/graph/search.cc and src/init.cc. Latencies in us, bandwidths in
// GB/s = 1e9 B/s, time = latency + S / algbw.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/nccl_tuning.hpp"
#include "stepcast/topology/overrides.hpp"
#include "stepcast/topology/topology.hpp"

namespace nccl_collnet_test {

using namespace stepcast;
using namespace stepcast::cost;

namespace {

const std::string kSource = STEPCAST_SOURCE_DIR;

topology::Topology with_collnet(const char* file, int nodes) {
  return topology::load_topology_with_sets(kSource + "/topologies/" + file, nodes, {"collnet.enabled=true"});
}

NcclSystem all_gpus(const topology::Topology& topo) { return nccl_system(topo, topo.tiers(topo.gpu_count())); }

const NcclCandidate& find(const NcclChoice& c, NcclAlgorithm a, NcclProtocol p = NcclProtocol::kSimple) {
  for (const NcclCandidate& x : c.candidates) {
    if (x.algorithm == a && x.protocol == p) return x;
  }
  FAIL("no such candidate");
  return c.candidates.front();
}

double us(Seconds s) { return s.value() * 1e6; }

constexpr double kGiB = 1073741824.0;

}  // namespace

TEST_SUITE("cost.nccl_collnet") {
  TEST_CASE("4 DGX H100 nodes, CollNet on: Direct 8 x 48/48 GB/s, Chain 8 x 45/45 GB/s, the NVLS graph's 8 heads") {
    // 8 NICs of 400 Gb/s = 50 GB/s a node; sm90 inter speeds 48, 45, 42, ...
    // Direct: one channel per GPU with a NIC of its own, at most NCCL_MAX_DIRECT_ARITY + 1 = 8: 8
    // channels. 48 is the fastest speed <= 50; a GPU's links carry 48 as its channel's head plus
    // 48 / 7 for each of the 7 other channels = 96 <= 370.8 (18 NVLinks x 20.6): fits. Not
    // duplicated (Hopper below 50 GB/s with more than 4 channels); 48 is the top of the list, so
    // pass 2 cannot raise bwIntra.
    // Chain: the ring's 8 channels (8 x 45, as in nccl_tuning_test.cpp's 10-node case), one per NIC.
    // 48: the NICs fit 8 x floor(50 / 48) = 8, but 8 x 48 = 384 > 370.8 on a GPU's links; 45 fits;
    // pass 2's 48 for bwIntra does not: 8 x 45/45.
    // Heads: transport/coll_net.cc takes the NVLS graph's 8 heads where NVLS runs. The chain's
    // bwIntra equals its bwInter, so connect.cc adds no channels: 2 x 8 = 16 (45 is not above 45).
    const NcclSystem s = all_gpus(with_collnet("dgx-h100.json", 4));
    CHECK(s.collnet);
    CHECK(s.collnet_direct.channels == 8);
    CHECK(s.collnet_direct.bw_intra.value() == doctest::Approx(48e9));
    CHECK(s.collnet_direct.bw_inter.value() == doctest::Approx(48e9));
    CHECK(s.collnet_chain.channels == 8);
    CHECK(s.collnet_chain.bw_intra.value() == doctest::Approx(45e9));
    CHECK(s.collnet_chain.bw_inter.value() == doctest::Approx(45e9));
    CHECK(s.collnet_heads == 8);
    CHECK(s.comm_channels == 16);
  }

  TEST_CASE("1 GiB all-reduce on 4 DGX H100 nodes, CollNet on: Direct 6257.78 us, Chain 6697.24 us, NVLS wins") {
    const NcclChoice c = nccl_choose(CollectiveOp::kAllReduce, Bytes(kGiB), all_gpus(with_collnet("dgx-h100.json", 4)));
    // CollNet Direct, ppn = 32 / 4 = 8: latency 0 + 2 x (min(1, 7) x 3.7 + 7 x 0.4) + 31 = 44 us.
    // Bandwidth: reduce-scatter's busBw, which the all-reduce branch of collnet.cc inherits:
    // 8 x min(48, 48 x 0.9) = 345.6; GPU/NIC factor 8 / 8 = 1 (halfway to 1: still 1); the Hopper
    // x 0.85 tests compCapIndex >= 90 and never applies; x 0.5 = 172.8 GB/s.
    // 1 GiB: 44 + 1073741824 / 172800 = 44 + 6213.78 = 6257.78 us.
    const NcclCandidate& direct = find(c, NcclAlgorithm::kCollNetDirect);
    CHECK(us(direct.latency) == doctest::Approx(44.0));
    CHECK(direct.algbw.value() == doctest::Approx(172.8e9));
    CHECK(us(direct.time) == doctest::Approx(44.0 + kGiB / 172800.0));
    // CollNet Chain: 2 x 7 x 2.8 + 30 = 69.2 us; 8 x min(45, 45 x 0.9) = 324, factor 1, x 0.5 =
    // 162 GB/s: 69.2 + 6628.04 = 6697.24 us.
    const NcclCandidate& chain = find(c, NcclAlgorithm::kCollNetChain);
    CHECK(us(chain.latency) == doctest::Approx(69.2));
    CHECK(chain.algbw.value() == doctest::Approx(162e9));
    CHECK(us(chain.time) == doctest::Approx(69.2 + kGiB / 162000.0));
    // NVLS across nodes, now that CollNet is on (nvls.cc): latency NVLink 25 + net 18 = 43 us;
    // per channel min(40 x 0.85 x 7/8 x 2 = 59.5, bwInter 48) = 48, x 8 = 384, x 32/62 =
    // 198.19 GB/s: 43 + 5417.64 = 5460.64 us: NCCL's pick. NVLS-Tree, as without CollNet: latency
    // 25 + 2 x log2(4) x 20.9 = 108.6 us; per channel min(59.5, 48, perChMaxNVLSTreeBw 45.5 for
    // Hopper beyond 2 nodes) = 45.5, x 8 = 364, x 32/62 = 187.87 GB/s: 108.6 + 5715.32 = 5823.92 us.
    const NcclCandidate& nvls = find(c, NcclAlgorithm::kNvls);
    CHECK(us(nvls.latency) == doctest::Approx(43.0));
    CHECK(nvls.algbw.value() == doctest::Approx(384e9 * 32.0 / 62.0));
    CHECK(us(find(c, NcclAlgorithm::kNvlsTree).time) == doctest::Approx(108.6 + kGiB / (364e3 * 32.0 / 62.0)));
    CHECK(c.chosen().algorithm == NcclAlgorithm::kNvls);
    CHECK(us(c.chosen().time) == doctest::Approx(43.0 + kGiB / (384e3 * 32.0 / 62.0)));
  }

  TEST_CASE("4 DGX A100 nodes, CollNet on: all-reduce inherits reduce-scatter's busBw, and CollNet Direct wins 4 MiB") {
    // 8 HDR NICs of 200 Gb/s = 25 GB/s; pre-sm90 inter speeds 48, 30, 28, 24, ...; a GPU's links
    // 12 x 20 = 240. Direct: 24, the fastest <= 25; 24 x 2 = 48 <= 240; not duplicated (below 25
    // GB/s); pass 2 raises bwIntra while below 2 x 24: 28, 30, then 48 (96 <= 240), the top: 8 x 48/24.
    // Chain: the ring's 8 x 24 channels; 24 fits (8 x 24 = 192 <= 240); pass 2: 28 (224), 30 (240),
    // not 48 (384): 8 x 30/24. No NVLS on Ampere: the Direct graph's 8 heads. connect.cc: the
    // chain's bwIntra 30 > bwInter 24 with 8 GPUs per node, so 2 x 8 = 16 channels + 16 / 2 = 24.
    const NcclSystem s = all_gpus(with_collnet("dgx-a100.json", 4));
    CHECK(s.collnet_direct.channels == 8);
    CHECK(s.collnet_direct.bw_intra.value() == doctest::Approx(48e9));
    CHECK(s.collnet_direct.bw_inter.value() == doctest::Approx(24e9));
    CHECK(s.collnet_chain.bw_intra.value() == doctest::Approx(30e9));
    CHECK(s.collnet_chain.bw_inter.value() == doctest::Approx(24e9));
    CHECK(s.collnet_heads == 8);
    CHECK(s.comm_channels == 24);
    // All-reduce: 8 x min(48, 24 x 0.9 = 21.6) = 172.8 carried from reduce-scatter, factor 1,
    // x 0.5 = 86.4 GB/s; NCCL's pre-split tuning.cc would have priced 8 channels x bwIntra 48 x 0.5
    // = 192 GB/s. All-gather and reduce-scatter: the same 172.8 x 0.5 = 86.4.
    const NcclChoice big = nccl_choose(CollectiveOp::kAllReduce, Bytes(kGiB), s);
    CHECK(find(big, NcclAlgorithm::kCollNetDirect).algbw.value() == doctest::Approx(86.4e9));
    CHECK(find(big, NcclAlgorithm::kCollNetChain).algbw.value() == doctest::Approx(86.4e9));
    CHECK(find(nccl_choose(CollectiveOp::kAllGather, Bytes(kGiB), s), NcclAlgorithm::kCollNetDirect).algbw.value() ==
          doctest::Approx(86.4e9));
    // 1 GiB: the ring's 8 x 24 x 32/62 = 99.10 GB/s ((8.4 + 56 x max(3.4, 3 x 2.0, the network
    // post overhead of DGX A100's AMD hosts, x3 for Simple) + 6 x 14) x 1.4 = 599.76 us + 10835.29)
    // = 11435.05 us beats Direct's 44 + 12427.57 = 12471.57.
    CHECK(big.chosen().algorithm == NcclAlgorithm::kRing);
    CHECK(us(big.chosen().time) == doctest::Approx(599.76 + kGiB / (192e3 * 32.0 / 62.0)));
    // 4 MiB: Direct 44 + 4194304 / 86400 = 92.55 us; Chain 69.2 + 48.55 = 117.75; the best other is
    // tree/LL128: 14 + 2 x (7 x 1.25 + log2(4) x 8.5) = 65.5 us, 8 x 24 x 0.92 = 176.64 capped at
    // 8 x 17.8 = 142.4, x 120/128, x 0.5 = 66.75 GB/s, x 0.8 (tree correction at 2^16 x 64 B) =
    // 53.4: 65.5 + 78.55 = 144.05 us.
    const NcclChoice mid = nccl_choose(CollectiveOp::kAllReduce, Bytes(4194304.0), s);
    CHECK(us(find(mid, NcclAlgorithm::kCollNetChain).time) == doctest::Approx(69.2 + 4194304.0 / 86400.0));
    CHECK(us(find(mid, NcclAlgorithm::kTree, NcclProtocol::kLL128).time) ==
          doctest::Approx(65.5 + 4194304.0 / 53400.0));
    CHECK(mid.chosen().algorithm == NcclAlgorithm::kCollNetDirect);
    CHECK(us(mid.chosen().time) == doctest::Approx(44.0 + 4194304.0 / 86400.0));
  }

  TEST_CASE("where NCCL runs no CollNet: one node, more than 8 GPUs per node, fewer NICs than GPUs") {
    const NcclChoice one =
        nccl_choose(CollectiveOp::kAllReduce, Bytes(kGiB), all_gpus(with_collnet("dgx-h100.json", 1)));
    CHECK(find(one, NcclAlgorithm::kCollNetDirect).disabled_because ==
          "CollNet runs across 2 or more nodes (NCCL_COLLNET_NODE_THRESHOLD)");
    // A GB200 NVL72 rack is one NVLink domain of 72 GPUs: above NCCL_MAX_DIRECT_ARITY + 1, while
    // NVLS across the racks reduces through CollNet.
    const NcclChoice racks =
        nccl_choose(CollectiveOp::kAllReduce, Bytes(kGiB), all_gpus(with_collnet("gb200-nvl72-4racks.json", 72)));
    CHECK(find(racks, NcclAlgorithm::kCollNetChain).disabled_because ==
          "CollNet runs with at most 8 GPUs per node (NCCL_MAX_DIRECT_ARITY + 1)");
    CHECK(find(racks, NcclAlgorithm::kNvls).enabled());
    // Half the NICs: GPUs 2i and 2i+1 share NIC i, so 4 heads for 8 GPUs. collnet.cc hard-disables
    // CollNet for a node of more local ranks than heads; NVLS all-reduce across nodes has no such
    // rule, its all-gather does (nvls.cc). The group of every other GPU has a NIC per GPU.
    const topology::Topology half = topology::load_topology(kSource + "/tests/cost/data/collnet-4nics.json");
    const NcclSystem full = all_gpus(half);
    CHECK(full.collnet_heads == 4);
    CHECK(find(nccl_choose(CollectiveOp::kAllReduce, Bytes(kGiB), full), NcclAlgorithm::kCollNetDirect)
              .disabled_because ==
          "CollNet needs a NIC of its own for every GPU of a node (more local ranks than collNetHeadsNum)");
    CHECK(find(nccl_choose(CollectiveOp::kAllReduce, Bytes(kGiB), full), NcclAlgorithm::kNvls).enabled());
    CHECK(find(nccl_choose(CollectiveOp::kAllGather, Bytes(kGiB), full), NcclAlgorithm::kNvls).disabled_because ==
          "NVLS all-gather and reduce-scatter across nodes need a NIC of its own for every GPU of a node (more local "
          "ranks than collNetHeadsNum)");
    const NcclSystem every_other = nccl_system(half, half.tiers(16, 2));
    CHECK(every_other.ranks_per_node == 4);
    CHECK(every_other.collnet_heads == 4);
    CHECK(
        find(nccl_choose(CollectiveOp::kAllReduce, Bytes(kGiB), every_other), NcclAlgorithm::kCollNetDirect).enabled());
  }

  TEST_CASE("CollNet off, NCCL's default: every shipped topology keeps the choice it had without CollNet") {
    // The shipped DGX and GB200 files state that their switches reduce, with CollNet off. Priced
    // as a fabric without in-network reduction (as before CollNet was modelled), every shipped
    // topology, node count, collective and size gets the same candidate and time, and no CollNet
    // candidate (nor NVLS across nodes) is enabled.
    const char* files[] = {"alcf-polaris.json",       "dgx-a100.json",      "dgx-b200.json",
                           "dgx-h100.json",           "dgx-h200.json",      "flat-400gbps.json",
                           "gb200-nvl72-4racks.json", "gb200-nvl72.json",   "mosaicml-a100-40gb.json",
                           "p4d-24xlarge.json",       "p4de-24xlarge.json", "p5-48xlarge.json"};
    const CollectiveOp ops[] = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                                CollectiveOp::kBroadcast, CollectiveOp::kReduce};
    int compared = 0;
    for (const char* file : files) {
      for (const int nodes : {1, 2, 4}) {
        const topology::Topology topo = topology::load_topology(
            kSource + "/topologies/" + file, std::string(file).starts_with("gb200") ? 18 * nodes : nodes);
        NcclHardware shipped = nccl_hardware(topo);
        CHECK(!shipped.collnet_enable);
        NcclHardware without = shipped;
        without.collnet_fabric = false;
        for (const int stride : {1, 8}) {
          const int ranks = (topo.gpu_count() - 1) / stride + 1;
          if (ranks < 2) continue;
          const topology::CommTiers tiers = topo.tiers(ranks, stride);
          const NcclSystem a = nccl_system(shipped, tiers, false);
          const NcclSystem b = nccl_system(without, tiers, false);
          CHECK(a.comm_channels == b.comm_channels);
          for (const CollectiveOp op : ops) {
            for (const double size : {4096.0, 1048576.0, kGiB}) {
              CAPTURE(std::string(file));
              CAPTURE(nodes);
              CAPTURE(to_string(op));
              CAPTURE(size);
              const NcclChoice with_block = nccl_choose(op, Bytes(size), a);
              const NcclCandidate before = nccl_pick(op, Bytes(size), b);
              CHECK(with_block.chosen().algorithm == before.algorithm);
              CHECK(with_block.chosen().protocol == before.protocol);
              CHECK(with_block.chosen().time == before.time);
              for (const NcclCandidate& c : with_block.candidates) {
                const bool in_network = c.algorithm == NcclAlgorithm::kCollNetDirect ||
                                        c.algorithm == NcclAlgorithm::kCollNetChain ||
                                        (c.algorithm == NcclAlgorithm::kNvls && a.nodes > 1);
                if (in_network) CHECK(!c.enabled());
              }
              ++compared;
            }
          }
        }
      }
    }
    CHECK(compared > 500);
  }

  TEST_CASE("names: NCCL_ALGO's CollNetDirect and CollNetChain, case-insensitive") {
    CHECK(parse_nccl_algorithm("CollNetDirect") == NcclAlgorithm::kCollNetDirect);
    CHECK(parse_nccl_algorithm("collnetchain") == NcclAlgorithm::kCollNetChain);
    CHECK(to_string(NcclAlgorithm::kCollNetDirect) == "collnetdirect");
    CHECK(nccl_runs(CollectiveOp::kReduceScatter, NcclAlgorithm::kCollNetDirect));
    CHECK(!nccl_runs(CollectiveOp::kAllGather, NcclAlgorithm::kCollNetChain));
    CHECK(!nccl_runs(CollectiveOp::kBroadcast, NcclAlgorithm::kCollNetDirect));
  }
}

}  // namespace nccl_collnet_test
