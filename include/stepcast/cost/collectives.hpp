// Analytical (alpha-beta) cost of collectives on a topology's tiers, in nccl-tests' conventions.
#pragma once

#include <optional>
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

/// The cost of one collective over `ranks` ranks. `size` is nccl-tests' S: the full buffer
/// (all-reduce, broadcast, reduce), the gathered output (all-gather), the input to be scattered
/// (reduce-scatter), each rank's send buffer (all-to-all), the message (send/recv).
struct CollectiveCost {
  Bytes size;
  int ranks = 1;
  Bytes bytes_sent_per_rank;  ///< on the busiest rank
  int steps = 0;              ///< sequential latency-bound steps
  Seconds latency_time;       ///< steps x alpha
  Seconds bandwidth_time;     ///< bytes / bottleneck bandwidth
  Seconds time;               ///< latency_time + bandwidth_time
  BytesPerSecond algbw;       ///< size / time
  BytesPerSecond busbw;       ///< algbw x busbw_factor (nccl-tests doc/PERFORMANCE.md)
  Explanation explanation;
};

/// nccl-tests' bus-bandwidth factor: 2(n-1)/n for all-reduce, (n-1)/n for all-gather,
/// reduce-scatter and all-to-all, 1 for broadcast, reduce and send/recv.
double busbw_factor(CollectiveOp op, int ranks);

/// The cost of `op` with `algorithm` for `size` bytes over the tiers of `tiers.ranks` ranks.
/// Throws InputError for a combination that does not exist (tree all-gather, ...).
CollectiveCost estimate_collective(CollectiveOp op, Algorithm algorithm, Bytes size, const topology::CommTiers& tiers);

/// Names as the command line spells them: "all-reduce", "ring", ...
std::string_view to_string(CollectiveOp op);
std::string_view to_string(Algorithm algorithm);
std::optional<CollectiveOp> parse_collective_op(std::string_view name);
std::optional<Algorithm> parse_algorithm(std::string_view name);

}  // namespace stepcast::cost
