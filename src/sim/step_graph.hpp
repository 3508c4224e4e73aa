// The dependency graph of a simulated step, recorded as it runs: every task, send, stream
// collective and optimizer step notes the node whose end let it start (or, for a task that
// waited inside on a gather, the gather that ended its wait), so walking back from the step's
// last node gives the critical path across stages and streams.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stepcast/des/time.hpp"
#include "stepcast/sim/pipeline_order.hpp"

namespace stepcast::sim::detail {

/// What a collective on a stage's data-parallel comm stream is for.
enum class RequestKind { kBucket, kGather, kReduceScatter, kReplicaAllReduce, kUpdatedGather };

struct PathNode {
  enum class Kind { kTask, kSend, kRequest, kOptimizer };
  Kind kind = Kind::kTask;
  des::Tick start = 0;
  des::Tick end = 0;
  std::int64_t pred = -1;  ///< the node whose end let this one start (or finish); -1 at the start of the step
  int stage = 0;
  int replica = 0;
  int to_stage = 0;  ///< sends: the receiving stage
  PipelineOp op;     ///< tasks, and the task a send carries the output of
  RequestKind request = RequestKind::kBucket;
};

/// The chain of nodes ending at `last`, first to last, as text such as "F3.0 (stage 1)",
/// "send B3.0 (stage 1 -> 0)", "parameter all-gather (stage 0)", with a run of equal steps as
/// "4 x gradient bucket (stage 0)"; replicas are named when `with_replica`.
std::vector<std::string> critical_path(const std::vector<PathNode>& nodes, std::int64_t last, bool with_replica);

/// "F3.0": kind (forward, backward, weight gradient), micro-batch, model chunk.
std::string task_name(const PipelineOp& op);

/// "gradient bucket", "parameter all-gather", ...
std::string_view to_string(RequestKind kind);

}  // namespace stepcast::sim::detail
