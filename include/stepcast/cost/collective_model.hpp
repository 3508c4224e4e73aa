// One collective cost model for every command: "this collective, these ranks, this topology,
// these concurrent groups" answered by NCCL's algorithm and protocol choice (nccl_tuning.hpp),
// each NIC shared with the groups that run at the same time (CommTiers::node_bw), calibration
// applied; stepcast's closed forms (collectives.hpp) where asked for by name. The step sums its
// answers; the simulator turns them into flows (sim/collective_flows.hpp).
#pragma once

#include <optional>
#include <string>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/nccl_tuning.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::cost {

/// What prices a collective: NCCL's tuning model (restricted as NCCL_ALGO and NCCL_PROTO do), or
/// one of stepcast's closed-form algorithms by name.
struct CollectiveModel {
  std::optional<Algorithm> closed_form;  ///< ring, tree, hierarchical, direct (alpha-beta)
  NcclFilter nccl;
  /// Not owned; may be null. NCCL's model takes its nccl_protocols; a calibration fitted for the
  /// closed forms (tiers, no nccl_protocols) prices with the closed-form ring it was fitted for.
  const Calibration* calibration = nullptr;
};

/// A group of ranks as the model sees it: its tiers (node_bw already shared with the groups
/// that run beside it) and NCCL's view of its GPUs.
struct CollectiveGroup {
  topology::CommTiers tiers;
  /// None for one rank, or for a GPU whose generation NCCL's model does not know (closed forms then).
  std::optional<NcclSystem> nccl;
  /// What the NICs achieve against NCCL's model, for a group across nodes whose topology names
  /// its network; none within a node, where the terms do not apply.
  std::optional<topology::NetworkFactors> network;
};

/// NCCL's view of the group (nccl_system) when its GPU is one NCCL tunes for; `explain` keeps
/// the derivation text (slower).
CollectiveGroup collective_group(const topology::Topology& topology, const topology::CommTiers& tiers,
                                 bool explain = false);
/// The same with the topology's hardware read once (none: NCCL's model does not know the GPU).
CollectiveGroup collective_group(const std::optional<NcclHardware>& hardware, const topology::CommTiers& tiers,
                                 bool explain = false);

/// What the simulator needs to play a collective as flows: each rank moves `bytes_per_rank`
/// around ring-ordered pairs at up to `rate_per_rank`, then waits `latency`; for the algorithms
/// that reduce in the network's switches, each of a node's `heads` sends `bytes_per_rank` into
/// them and takes as much back (sim/collective_flows.hpp).
struct FlowParameters {
  Bytes bytes_per_rank;          ///< the bytes each rank puts on its busiest link; a head's to the switches
  BytesPerSecond rate_per_rank;  ///< what the chosen algorithm and protocol reach alone
  Seconds latency;
  /// CollNet Direct and Chain, and NVLS across nodes (which reduces through CollNet): the GPUs of
  /// a node that exchange with the switches (NCCL's heads); 0 for the other algorithms.
  int heads = 0;
};

/// One collective as the model prices it.
struct CollectivePrice {
  Seconds time;  ///< latency + bandwidth_time
  Seconds latency;
  Seconds bandwidth_time;  ///< with the node's NICs shared among the concurrent groups
  /// The group's share of the NICs NCCL's channels use (node_bw / group_nic_bw, at most 1; 1 on
  /// one node): the slowdown the concurrent groups cause.
  double nic_share = 1.0;
  /// Set when NCCL's model priced it: the algorithm and protocol NCCL's tuner picks.
  std::optional<NcclCandidate> nccl;
  /// Set for send/recv and all-to-all on NCCL's point-to-point channels.
  std::optional<NcclP2p> p2p;
  /// The network's terms that priced it (latency, bandwidth_time and flows include them); none
  /// within a node, on a topology that names no network, or under a calibration's NCCL factors.
  std::optional<topology::NetworkFactors> network;
  /// Set when a closed form priced it (by request, a closed-form calibration, or a GPU NCCL's
  /// model does not know).
  std::optional<Algorithm> closed_form;
  Bottleneck bottleneck = Bottleneck::kNone;
  FlowParameters flows;
  /// The calibration was fitted on other sizes, rank counts or node counts than this collective's.
  bool outside_calibration = false;
  /// The thread blocks NCCL's kernel runs, one per channel, each holding an SM of every GPU of
  /// the group while the call runs (the compute beside it has the others); 0 for a closed form.
  int blocks = 0;
};

/// Prices `op` for `size` (nccl-tests' S) over the group. Throws InputError where the closed
/// form refuses the combination or NCCL's filter leaves no candidate.
CollectivePrice price_collective(const CollectiveGroup& group, CollectiveOp op, Bytes size,
                                 const CollectiveModel& model);

/// The share of a GPU's `sm_count` SMs a collective of `blocks` thread blocks holds while it runs
/// (CollectivePrice::blocks), leaving at least one SM to the compute beside it.
double sm_share(int blocks, int sm_count);

/// "ring/Simple", "nvls/Simple", "p2p/Simple" (send/recv, all-to-all), or a closed form's name ("ring", "direct").
std::string model_name(const CollectivePrice& price);

}  // namespace stepcast::cost
