// The dependencies of a simulated step, recorded as it runs: every task, send, stream collective
// and optimizer step notes the node whose end let it start (or, for a task that waited inside on a
// gather, the gather that ended its wait), so walking back from the step's last node gives the
// critical path across stages and streams.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stepcast/des/time.hpp"
#include "stepcast/graph/step_graph.hpp"
#include "stepcast/sim/pipeline_order.hpp"

namespace stepcast::sim::detail {

struct PathNode {
  enum class Kind { kTask, kSend, kRequest, kOptimizer };
  Kind kind = Kind::kTask;
  des::Tick start = 0;
  des::Tick end = 0;
  std::int64_t pred = -1;  ///< the node whose end let this one start (or finish); -1 at the start of the step
  int stage = 0;
  int replica = 0;
  int to_stage = 0;        ///< sends: the receiving stage
  PipelineOp op;           ///< tasks, and the task a send carries the output of
  std::uint32_t comm = 0;  ///< requests: the step graph's communication node
};

/// The chain of nodes ending at `last`, first to last, as text such as "F3.0 (stage 1)",
/// "send B3.0 (stage 1 -> 0)", "FSDP all-gather (forward) (stage 0)" (requests by their graph
/// node's name), with a run of equal steps as "4 x DDP gradient all-reduce (stage 0)"; replicas
/// are named when `with_replica`.
std::vector<std::string> critical_path(const std::vector<PathNode>& nodes, std::int64_t last, bool with_replica,
                                       const graph::StepGraph& graph);

/// "F3.0": kind (forward, backward, weight gradient), micro-batch, model chunk.
std::string task_name(const PipelineOp& op);

}  // namespace stepcast::sim::detail
