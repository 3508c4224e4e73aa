// Send/recv and all-to-all as NCCL runs them: point-to-point transfers spread over the p2p
// channels that src/graph/paths.cc (NVIDIA/nccl, commit 04cdb808 of the 2026 tree) gives each
// peer. Inside a node each channel runs at the ring graph's channel speed, capped by the GPU's
// links; across nodes at NCCL_P2P_PER_CHANNEL_NET_BW, the rate NCCL sizes its network channels by,
// capped by the NIC. An all-to-all's traffic off the node crosses all the node's NICs, as PXN
// relays each transfer to the NIC on the peer's rail.
// NCCL's tuner has no p2p table, so one transfer is priced as one ring/Simple step: baseLat plus
// one hop's hwLat; an all-to-all pays a hop per round of peers the channels cannot run at once.
#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "nccl_tuning_tables.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/numeric.hpp"
#include "stepcast/cost/nccl_tuning.hpp"

namespace stepcast::cost {
namespace {

namespace t = nccl_tables;

int pow2_up(int v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

constexpr std::size_t kSimple = static_cast<std::size_t>(NcclProtocol::kSimple);

}  // namespace

NcclP2p nccl_p2p(CollectiveOp op, Bytes size, const NcclSystem& s, BytesPerSecond node_bw, double oversubscription,
                 const NcclTuning& tuning) {
  STEPCAST_ASSERT(op == CollectiveOp::kSendRecv || op == CollectiveOp::kAllToAll, "point-to-point collectives only");
  STEPCAST_ASSERT(s.ranks >= 2 && s.channels >= 1, "a communicator of two or more ranks");
  // ncclTopoComputeP2pChannels: p2pnChannels from the communicator's channels.
  const int p2p_channels = std::min(pow2_up(std::max(1, s.comm_channels)), t::kMaxChannels);
  // ncclTopoGetNchannels, the fewest over the peers: 2 per NVLink (2 over PCIe) inside the node;
  // across nodes one per local NIC and more to reach the NICs' bandwidth at 14 GB/s a channel.
  int fewest = t::kMaxChannels;
  if (s.ranks_per_node > 1)
    fewest = std::min(fewest, s.gpu_links > 0 ? t::kP2pChannelsPerNvlink * s.gpu_links : t::kP2pChannelsPci);
  const double local_nic_GBps = s.gpu_nic_bw.value() / unit::kGiga;
  if (s.nodes > 1) {
    const int by_bw = static_cast<int>(std::ceil(local_nic_GBps / t::kP2pPerChannelNetBw - 1e-9));
    fewest = std::min(fewest, std::max(s.nics_per_gpu, by_bw));
  }
  int per_peer = pow2_up(fewest);
  if (s.nodes > 1) {
    // Across nodes, fewer channels per peer until every peer fits one round of p2pnChannels,
    // NCCL_MAX_DEV_WORK_P2P_PER_BATCH peers to a batch.
    const int batches = (s.ranks + t::kMaxP2pPerBatch - 1) / t::kMaxP2pPerBatch;
    while (per_peer * batches > p2p_channels && per_peer > 1) per_peer /= 2;
  } else {
    per_peer = std::min(per_peer, p2p_channels);
  }
  NcclP2p r;
  r.channels_per_peer = per_peer;
  const BytesPerSecond channels_bw = s.channel_bw * as_double(r.channels_per_peer);
  const BytesPerSecond intra_peer = std::min(channels_bw, s.gpu_bw);
  const BytesPerSecond net_peer =
      std::min(gbyte_per_s(t::kP2pPerChannelNetBw) * as_double(r.channels_per_peer), s.gpu_nic_bw);
  const bool across = s.nodes > 1;
  const double hop = across ? t::kRingNetLatency_us[kSimple]
                            : (s.nvlink ? t::kRingNvlinkLatency_us[kSimple] : t::kRingPciLatency_us[kSimple]);
  const double base = t::kRingBaseLatency_us[kSimple];
  const NcclProtocolTuning& cal = tuning[kSimple];
  if (op == CollectiveOp::kSendRecv) {
    // nccl-tests' sendrecv: each rank to the next; with ranks on several nodes, some pair crosses.
    r.peer_bw = across ? net_peer : intra_peer;
    r.bandwidth_time = size / (r.peer_bw * cal.bandwidth_efficiency);
    r.latency = microseconds((base + hop) * cal.latency_factor);
    r.latency_formula =
        fmt::format("baseLat {} + one {} hop {} (ring/Simple step)", base, across ? "network" : "intra-node", hop);
    r.bandwidth_formula = fmt::format("S / min({} ch x {}, {})", r.channels_per_peer,
                                      format_bandwidth(across ? gbyte_per_s(t::kP2pPerChannelNetBw) : s.channel_bw),
                                      format_bandwidth(across ? s.gpu_nic_bw : s.gpu_bw));
  } else {
    // S/N to each rank: (g-1)/N S stays in the node over the GPU's links, g(N-g)/N S of the node
    // leaves it through every NIC of the node (PXN), the core giving 1/oversubscription of it.
    const int n = s.ranks;
    const int g = s.ranks_per_node;
    r.peer_bw = intra_peer;
    Seconds intra;
    if (g > 1) intra = size * (as_double(g - 1) / as_double(n)) / std::min(s.gpu_bw, channels_bw * as_double(g - 1));
    Seconds inter;
    if (across) {
      const BytesPerSecond core = node_bw / oversubscription;
      inter = std::max(size * (as_double(g) * as_double(n - g) / as_double(n)) / core,
                       size * (as_double(n - g) / as_double(n)) / (net_peer * as_double(n - g)));
    }
    r.bandwidth_time = std::max(intra, inter) / cal.bandwidth_efficiency;
    // Peers run side by side on p2pnChannels / channels-per-peer channels; the rest wait a round.
    const int side_by_side = std::max(1, p2p_channels / r.channels_per_peer);
    const int rounds = (n - 1 + side_by_side - 1) / side_by_side;
    r.latency = microseconds((base + rounds * hop) * cal.latency_factor);
    r.latency_formula = fmt::format("baseLat {} + {} rounds x hop {} ({} peers, {} side by side)", base, rounds, hop,
                                    n - 1, side_by_side);
    r.bandwidth_formula = fmt::format("max((g-1)/N S / GPU links, g(N-g)/N S / (node NICs / {}))", oversubscription);
  }
  r.time = r.latency + r.bandwidth_time;
  return r;
}

}  // namespace stepcast::cost
