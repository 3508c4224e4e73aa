// The one collective model: NCCL's tuner picks the algorithm and protocol for the group as NCCL
// would (it knows nothing of other communicators), then the NICs its channels cross are shared
// with the groups that run at the same time, each getting node_bw / group_nic_bw of their rate.
#include "stepcast/cost/collective_model.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <limits>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/numeric.hpp"

namespace stepcast::cost {
namespace {

// A calibration fitted for the closed forms (stepcast calibrate's tier figures) without NCCL
// protocol factors: the closed form it was fitted for prices with it.
bool closed_form_calibration(const Calibration* c) {
  return c != nullptr && c->nccl_protocols.empty() && (!c->tiers.empty() || !c->collectives.empty());
}

// The bytes each rank puts on its busiest link for NCCL's algorithm: the ring's and tree's
// nccl-tests busbw factor (a double binary tree moves 2S through each node as a ring does, one
// tree interior and one leaf: Sanders, Speck and Traeff 2009); NVLS all-reduce sends S up to the
// NVSwitch and takes S back, plus the shard it reduces and multicasts ((N+1)/N S each way:
// NVIDIA's NVLink SHARP, multimem ld_reduce then st). NVLS-Tree between two nodes sends each
// node's reduced S across once, up or down the tree (S per node, where a ring sends 2(n-1)/n S:
// NCCL's nvls.cc doubles bwInter for it); over more nodes a double binary tree moves 2S per node.
double traffic_factor(CollectiveOp op, NcclAlgorithm a, int ranks, int nodes) {
  if (a == NcclAlgorithm::kNvls && op == CollectiveOp::kAllReduce) return (as_double(ranks) + 1.0) / as_double(ranks);
  if (a == NcclAlgorithm::kNvlsTree && nodes == 2) return 1.0;
  return busbw_factor(op, ranks);
}

// The heads of an algorithm that reduces in the network's switches: CollNet's (collNetHeadsNum,
// every GPU of a node where CollNet runs) and NVLS across nodes' (one per NVLS channel), each
// sending the node's data into the switches once, S / heads, and taking the result back (NVIDIA
// SHARP through NCCL's CollNet), where a ring sends 2(n-1)/n S through each NIC. 0 otherwise.
int in_network_heads(NcclAlgorithm a, const NcclSystem& s) {
  if (a == NcclAlgorithm::kCollNetDirect || a == NcclAlgorithm::kCollNetChain) return s.collnet_heads;
  if (a == NcclAlgorithm::kNvls && s.nodes > 1) return s.nvls_channels;
  return 0;
}

// The thread blocks NCCL launches for a collective: one per channel (NCCL's enqueue.cc,
// topoGetAlgoInfo's nc before it trims the channels of small calls): the communicator's channels
// for ring, tree and PAT, the NVLS graph's for NVLS and NVLS-Tree, the CollNet graph's for CollNet.
int nccl_blocks(NcclAlgorithm a, const NcclSystem& s) {
  switch (a) {
    case NcclAlgorithm::kNvls:
    case NcclAlgorithm::kNvlsTree:
      return s.nvls_channels;
    case NcclAlgorithm::kCollNetDirect:
      return s.collnet_direct.channels;
    case NcclAlgorithm::kCollNetChain:
      return s.collnet_chain.channels;
    case NcclAlgorithm::kTree:
    case NcclAlgorithm::kRing:
    case NcclAlgorithm::kPat:
      return s.comm_channels;
  }
  STEPCAST_UNREACHABLE("unknown NCCL algorithm");
}

// Whether a size and group fall outside what the calibration's NCCL protocol fit saw.
bool outside_nccl_fit(const CollectiveModel& model, Bytes size, const topology::CommTiers& t) {
  return model.calibration && !model.calibration->nccl_protocols.empty() &&
         !within_fitted_range(*model.calibration, size, t.ranks, t.nodes);
}

// The network's terms apply to NCCL's model across nodes, unless a calibration's NCCL protocol
// factors (fitted on the user's own cluster, against NCCL's bare model) stand in for them.
std::optional<topology::NetworkFactors> network_factors(const CollectiveGroup& group, const CollectiveModel& model) {
  if (model.calibration && !model.calibration->nccl_protocols.empty()) return std::nullopt;
  return group.network;
}

// NCCL's pick as the network achieves it: NCCL still picks with its own model (it knows nothing
// of the network's shortfall), then the pick takes latency_factor x its latency and its
// bandwidth time over the efficiency.
void achieve(Seconds& latency, Seconds& bandwidth_time, double latency_factor, double efficiency) {
  latency = latency * latency_factor;
  bandwidth_time = bandwidth_time / efficiency;
}

CollectivePrice closed_form(const CollectiveGroup& group, CollectiveOp op, Bytes size, Algorithm algorithm,
                            const Calibration* calibration) {
  const topology::CommTiers tiers = calibration ? apply(*calibration, group.tiers, op, size) : group.tiers;
  const CollectiveCost c = estimate_collective(op, algorithm, size, tiers);
  CollectivePrice p;
  p.closed_form = algorithm;
  p.latency = c.latency_time;
  p.bandwidth_time = c.bandwidth_time;
  p.time = c.time;
  p.bottleneck = c.bottleneck;
  p.flows.bytes_per_rank = c.bytes_sent_per_rank;
  p.flows.latency = c.latency_time;
  p.flows.rate_per_rank = c.bandwidth_time.value() > 0.0 ? c.bytes_sent_per_rank / c.bandwidth_time
                                                         : BytesPerSecond(std::numeric_limits<double>::infinity());
  return p;
}

// Send/recv and all-to-all on NCCL's p2p channels (nccl_p2p). A send across nodes shares its
// GPU's NIC with the groups beside it; an all-to-all's node bandwidth is already the shared one.
CollectivePrice point_to_point(const CollectiveGroup& group, CollectiveOp op, Bytes size,
                               const CollectiveModel& model) {
  const topology::CommTiers& t = group.tiers;
  const NcclTuning tuning = model.calibration ? nccl_tuning(*model.calibration) : NcclTuning{};
  NcclP2p p2p = nccl_p2p(op, size, *group.nccl, t.node_bw, t.oversubscription, tuning);
  CollectivePrice p;
  p.network = network_factors(group, model);
  if (p.network) {
    achieve(p2p.latency, p2p.bandwidth_time, p.network->latency_factor, p.network->p2p_bandwidth_efficiency);
    p2p.time = p2p.latency + p2p.bandwidth_time;
  }
  if (op == CollectiveOp::kSendRecv && t.nodes > 1 && t.group_nic_bw.value() > 0.0) {
    p.nic_share = std::min(1.0, t.node_bw / t.group_nic_bw);
  }
  p.latency = p2p.latency;
  p.bandwidth_time = p2p.bandwidth_time / p.nic_share;
  p.time = p.latency + p.bandwidth_time;
  p.bottleneck = t.nodes > 1 ? Bottleneck::kNodeNics : Bottleneck::kIntraNode;
  p.flows.bytes_per_rank = op == CollectiveOp::kSendRecv ? size : size * (as_double(t.ranks - 1) / as_double(t.ranks));
  p.flows.rate_per_rank = p.flows.bytes_per_rank / p2p.bandwidth_time;
  p.flows.latency = p2p.latency;
  p.p2p = p2p;
  p.outside_calibration = outside_nccl_fit(model, size, t);
  // A send to one peer runs on that peer's channels; an all-to-all on the communicator's, to
  // every peer at once (NVIDIA/nccl src/graph/paths.cc, ncclTopoComputeP2pChannels).
  p.blocks = op == CollectiveOp::kSendRecv ? p2p.channels_per_peer : group.nccl->comm_channels;
  return p;
}

}  // namespace

CollectiveGroup collective_group(const topology::Topology& topology, const topology::CommTiers& tiers, bool explain) {
  std::optional<NcclHardware> hardware;
  if (tiers.ranks >= 2 && nccl_compute_capability(topology.gpu())) hardware = nccl_hardware(topology);
  return collective_group(hardware, tiers, explain);
}

CollectiveGroup collective_group(const std::optional<NcclHardware>& hardware, const topology::CommTiers& tiers,
                                 bool explain) {
  CollectiveGroup g{tiers, std::nullopt, std::nullopt};
  if (tiers.ranks >= 2 && hardware) g.nccl = nccl_system(*hardware, tiers, explain);
  if (tiers.nodes > 1 && hardware && hardware->network) g.network = hardware->network->factors;
  return g;
}

CollectivePrice price_collective(const CollectiveGroup& group, CollectiveOp op, Bytes size,
                                 const CollectiveModel& model) {
  const topology::CommTiers& t = group.tiers;
  if (t.ranks < 2 || !(size.value() > 0.0)) {
    CollectivePrice none;  // nothing moves
    none.closed_form = model.closed_form.value_or(algorithms_for(op).front());
    return none;
  }
  if (!has_nccl_tuning(op) && !model.closed_form && group.nccl && !closed_form_calibration(model.calibration)) {
    return point_to_point(group, op, size, model);
  }
  if (model.closed_form || !has_nccl_tuning(op) || !group.nccl || closed_form_calibration(model.calibration)) {
    const Algorithm algorithm = model.closed_form.value_or(algorithms_for(op).front());
    CollectivePrice p = closed_form(group, op, size, algorithm, model.calibration);
    p.outside_calibration = model.calibration && !within_fitted_range(*model.calibration, size, t.ranks, t.nodes);
    return p;
  }
  const NcclTuning tuning = model.calibration ? nccl_tuning(*model.calibration) : NcclTuning{};
  NcclCandidate pick = nccl_pick(op, size, *group.nccl, model.nccl, tuning);
  CollectivePrice p;
  p.network = network_factors(group, model);
  if (p.network) {
    achieve(pick.latency, pick.bandwidth_time, p.network->latency_factor, p.network->bandwidth_efficiency);
    pick.time = pick.latency + pick.bandwidth_time;
    pick.algbw = size / pick.bandwidth_time;
  }
  if (t.nodes > 1 && t.group_nic_bw.value() > 0.0) p.nic_share = std::min(1.0, t.node_bw / t.group_nic_bw);
  p.latency = pick.latency;
  p.bandwidth_time = pick.bandwidth_time / p.nic_share;
  p.time = p.latency + p.bandwidth_time;
  p.bottleneck = t.nodes > 1 ? Bottleneck::kNodeNics : Bottleneck::kIntraNode;
  p.flows.heads = in_network_heads(pick.algorithm, *group.nccl);
  p.flows.bytes_per_rank =
      p.flows.heads > 0 ? size / as_double(p.flows.heads) : size * traffic_factor(op, pick.algorithm, t.ranks, t.nodes);
  p.flows.rate_per_rank = p.flows.bytes_per_rank / pick.bandwidth_time;
  p.flows.latency = pick.latency;
  p.nccl = pick;
  p.outside_calibration = outside_nccl_fit(model, size, t);
  p.blocks = nccl_blocks(pick.algorithm, *group.nccl);
  return p;
}

double sm_share(int blocks, int sm_count) {
  if (sm_count < 2 || blocks <= 0) return 0.0;
  return static_cast<double>(std::min(blocks, sm_count - 1)) / sm_count;
}

std::string model_name(const CollectivePrice& price) {
  if (price.p2p) return "p2p/Simple";
  if (price.nccl) {
    std::string name(to_string(price.nccl->algorithm));
    name += '/';
    name += to_string(price.nccl->protocol);
    return name;
  }
  return std::string(to_string(price.closed_form.value_or(Algorithm::kRing)));
}

}  // namespace stepcast::cost
