// The CollNet graphs NCCL's channel search finds (NVIDIA/nccl src/graph/search.cc ncclTopoCompute
// with graph->collNet, as src/init.cc at commit 1fc949c5 asks for them), sketched with the budgets
// of the ring's search (nccl_tuning_system.cpp): a GPU's NVLink or PCIe total and each NIC, only
// NICs with in-network reduction taking part (search.cc skips a NIC without collSupport; a fabric
// that reduces reduces on all of its NICs here).
#include "nccl_collnet.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <span>

#include "nccl_search.hpp"
#include "nccl_tuning_tables.hpp"
#include "stepcast/core/units.hpp"

namespace stepcast::cost::nccl_detail {
namespace {

namespace t = nccl_tables;

struct Budgets {
  int ppn = 1;       // the communicator's GPUs on a node
  int nics = 1;      // the NICs they reach
  double nic = 0.0;  // one NIC's bandwidth, GB/s
  double gpu = 0.0;  // a GPU's intra-node links as NCCL counts them, GB/s
  int cc = 80;
};

std::size_t index_of(std::span<const double> speeds, double v) {
  std::size_t i = 0;
  while (i + 1 < speeds.size() && speeds[i] > v) ++i;
  return i;
}

// search.cc pass 2 for graphs other than rings and NVLS ("increase bwIntra for trees (2 nodes or
// collnet)"): bwIntra rises one speed at a time while it is below twice bwInter and the channels
// still fit.
// A duplicated speed off the list (45 / 2) starts pass 2 at the next listed one, which differs
// from the graph's, so it never rises.
template <typename Fits>
double raise_intra(std::span<const double> speeds, double inter, Fits fits_intra) {
  std::size_t i = index_of(speeds, inter);
  if (speeds[i] != inter) return inter;
  double intra = inter;
  for (; i > 0 && intra < 2.0 * inter && fits_intra(speeds[i - 1]); --i) intra = speeds[i - 1];
  return intra;
}

// CollNet Direct (NCCL_TOPO_PATTERN_COLLNET_DIRECT): one channel per head, a GPU with a NIC of its
// own (ncclTopoSearchRecNet skips a NIC whose closest GPU already heads a channel), at most
// NCCL_MAX_DIRECT_ARITY + 1 and the node's GPUs; each channel loads its head's NIC with bwInter and
// every path between its head and the node's other GPUs with bwIntra / (ppn - 1) each way
// (ncclTopoSearchTryCollnetDirect), so a GPU's links carry bwIntra as a head plus bwIntra / (ppn - 1)
// for every other channel. The search stops at the first speed that fits all channels; channels
// are duplicated (ncclTopoDupChannels) up to the maximum where the speed allows.
NcclGraph direct_graph(const Budgets& b, int* heads) {
  const std::span<const double> speeds = inter_speeds(b.cc);
  const int max_channels = std::min(t::kMaxDirectArity + 1, b.ppn);
  int channels = std::min({b.ppn, b.nics, max_channels});
  *heads = channels;
  const auto fits_intra = [&](double v) {
    if (b.ppn == 1) return true;
    return v * (1.0 + (channels - 1.0) / (b.ppn - 1.0)) <= b.gpu + 1e-3;
  };
  std::size_t i = index_of(speeds, b.nic);
  while (i + 1 < speeds.size() && !fits_intra(speeds[i])) ++i;
  double inter = speeds[i];
  const bool dup = inter >= t::kDupChannelsMinSpeed &&
                   !(b.cc > 80 && inter < t::kDupChannelsMinSpeedSm90 && channels > t::kDupChannelsMaxChannelsSm90);
  if (dup) {
    const int doubled = std::min(2 * channels, max_channels);
    const int ways = (doubled + channels - 1) / channels;  // NCCL's integer DIVUP
    inter /= static_cast<double>(ways);
    channels = doubled;
  }
  return {channels, gbyte_per_s(raise_intra(speeds, inter, fits_intra)), gbyte_per_s(inter)};
}

// CollNet Chain (NCCL_TOPO_PATTERN_TREE with collNet): as many channels as the ring graph, each a
// chain of the node's GPUs from a head that sends to and receives from one NIC at bwInter
// (backToNet = 0, the same NIC), a hop to the next GPU at bwIntra. Channels spread over the NICs
// as the ring's do; a GPU's links carry bwIntra for every channel. Duplication cannot add channels
// (it stops at the ring's count).
NcclGraph chain_graph(const Budgets& b, int channels) {
  const std::span<const double> speeds = inter_speeds(b.cc);
  const auto fits_intra = [&](double v) { return b.ppn == 1 || fit(b.gpu, v) >= channels; };
  std::size_t i = index_of(speeds, b.nic);
  for (; i < speeds.size(); ++i) {
    if (b.nics * fit(b.nic, speeds[i]) >= channels && fits_intra(speeds[i])) break;
  }
  if (i == speeds.size()) return {};
  return {channels, gbyte_per_s(raise_intra(speeds, speeds[i], fits_intra)), gbyte_per_s(speeds[i])};
}

}  // namespace

void derive_collnet(NcclSystem& s, const NcclHardware& hardware, const topology::CommTiers& tiers, double gpu_GBps,
                    Explanation* derivation) {
  s.collnet_fabric = hardware.collnet_fabric;
  s.collnet_enable = hardware.collnet_enable;
  // init.cc computes the CollNet graphs with collnetEnable, and turns it off below
  // NCCL_COLLNET_NODE_THRESHOLD nodes and where the Chain graph has no channel.
  if (!s.collnet_enable || s.nodes < t::kCollNetNodeThreshold) return;
  Budgets b;
  b.ppn = s.ranks_per_node;
  b.nics = std::max(1, tiers.nics);
  b.nic = tiers.group_nic_bw.value() / unit::kGiga / b.nics;
  b.gpu = gpu_GBps;
  b.cc = s.compute_capability;
  int direct_heads = 0;
  s.collnet_direct = direct_graph(b, &direct_heads);
  s.collnet_chain = chain_graph(b, s.channels);
  s.collnet = s.collnet_chain.channels > 0;
  // transport/coll_net.cc ncclCollNetSetup (022c022a): the NVLS graph's heads where NVLS runs,
  // else the CollNet Direct graph's distinct heads.
  s.collnet_heads = s.nvls_channels > 0 ? s.nvls_channels : direct_heads;
  if (derivation) {
    const auto bw = [](const NcclGraph& g) {
      return fmt::format("{} x {:.4g}/{:.4g} GB/s", g.channels, g.bw_intra.value() / unit::kGiga,
                         g.bw_inter.value() / unit::kGiga);
    };
    derivation->push_back(
        {"CollNet graphs",
         fmt::format("Direct: one channel per GPU with a NIC of its own (at most {}), bwInter <= the NIC's {:.4g}; "
                     "Chain: the ring's {} channels behind the NICs; bwIntra raised up to twice bwInter; heads "
                     "from the {} graph",
                     t::kMaxDirectArity + 1, b.nic, s.channels, s.nvls_channels > 0 ? "NVLS" : "CollNet Direct"),
         fmt::format("Direct {}, Chain {} (bwIntra/bwInter), {} heads", bw(s.collnet_direct), bw(s.collnet_chain),
                     s.collnet_heads)});
  }
}

}  // namespace stepcast::cost::nccl_detail
