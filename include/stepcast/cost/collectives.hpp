// Analytical (alpha-beta) cost of collectives on a topology's tiers, in nccl-tests' conventions.
// The formulas and their sources are in src/cost/collectives.cpp, one function per algorithm.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "stepcast/core/explain.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::cost {

enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce, kAllToAll, kSendRecv };

enum class Algorithm {
  kRing,          ///< flat ring over all ranks (NCCL ring; several channels share a node's NICs)
  kTree,          ///< NCCL-style double binary tree
  kHierarchical,  ///< intra-node step, then inter-node ring, then intra-node step
  kDirect,        ///< all pairs at once (all-to-all) or one transfer (send/recv)
};

/// The part of the machine whose bandwidth sets a collective's bandwidth term.
enum class Bottleneck {
  kNone,       ///< nothing moves (one rank)
  kIntraNode,  ///< GPU-to-GPU bandwidth inside a node (NVLink/NVSwitch, PCIe)
  kNodeNics,   ///< a node's NICs, shared by its GPUs (and the fabric core's oversubscription)
  kGpuNic,     ///< one GPU's own route out of its node
};

/// The cost of one collective over `ranks` ranks. `size` is nccl-tests' S: the full buffer
/// (all-reduce, broadcast, reduce), the gathered output (all-gather), the input to be scattered
/// (reduce-scatter), each rank's send buffer (all-to-all), the message (send/recv).
struct CollectiveCost {
  Bytes size;
  int ranks = 1;
  Bytes bytes_sent_per_rank;                  ///< on the busiest rank (tree all-reduce: the average over ranks)
  int steps = 0;                              ///< sequential latency-bound steps
  Seconds latency_time;                       ///< steps x alpha
  Seconds bandwidth_time;                     ///< bytes / bottleneck bandwidth
  Seconds time;                               ///< latency_time + bandwidth_time
  BytesPerSecond algbw;                       ///< size / time; zero when time is zero (one rank)
  BytesPerSecond busbw;                       ///< algbw x busbw_factor (nccl-tests doc/PERFORMANCE.md)
  int nodes = 1;                              ///< nodes the ranks span
  Bottleneck bottleneck = Bottleneck::kNone;  ///< the tier behind bandwidth_time
  /// The formula terms with their numbers: filled by explain_collective, empty from
  /// estimate_collective (which stays allocation-free for the planner's inner loops).
  Explanation explanation;
};

/// nccl-tests' bus-bandwidth factor: 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
/// reduce-scatter and all-to-all, 1 for broadcast, reduce and send/recv.
double busbw_factor(CollectiveOp op, int ranks);

/// The cost of `op` with `algorithm` for `size` bytes over the tiers of `tiers.ranks` ranks.
/// Throws InputError for a combination that does not exist (tree all-gather, ...), a negative
/// size, fewer than one rank, or a hierarchical collective over unevenly filled nodes.
/// Allocates nothing; `explanation` is left empty.
CollectiveCost estimate_collective(CollectiveOp op, Algorithm algorithm, Bytes size, const topology::CommTiers& tiers);

/// As estimate_collective, with `explanation` filled: every input and formula term with its value.
CollectiveCost explain_collective(CollectiveOp op, Algorithm algorithm, Bytes size, const topology::CommTiers& tiers);

/// Whether stepcast models `op` with `algorithm`.
bool is_supported(CollectiveOp op, Algorithm algorithm);
/// The algorithms stepcast models for `op`, the first being the default (ring where there is one).
std::span<const Algorithm> algorithms_for(CollectiveOp op);
/// Every collective, in declaration order.
std::span<const CollectiveOp> all_collective_ops();

/// Names as the command line spells them: "all-reduce", "ring", ...
std::string_view to_string(CollectiveOp op);
std::string_view to_string(Algorithm algorithm);
std::string_view to_string(Bottleneck bottleneck);
/// Accepts the names above and nccl-tests' spellings ("all_reduce", "alltoall", "sendrecv").
std::optional<CollectiveOp> parse_collective_op(std::string_view name);
std::optional<Algorithm> parse_algorithm(std::string_view name);
/// "all-reduce, reduce-scatter, ..." and "ring, tree, ...", for error messages and help.
std::string accepted_collective_ops();
std::string accepted_algorithms();
/// The algorithms accepted for `op`, comma-separated, for error messages.
std::string accepted_algorithms(CollectiveOp op);

}  // namespace stepcast::cost
