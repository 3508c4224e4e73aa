// Building a step graph: the compute from the operator model, then one contributor per parallel
// dimension adds its groups and communication nodes. A new parallelism is one contributor plus its
// plan keys and rules; neither engine changes.
#pragma once

#include <span>
#include <string>

#include "stepcast/cost/calibration.hpp"
#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/graph/step_graph.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::graph {

/// What a contributor reads.
struct GraphContext {
  const workload::Workload& workload;
  const plan::Plan& plan;
  const topology::Topology& topology;
  /// DDP's bucket (bucket_cap_mb) and DeepSpeed's reduce_bucket_size, as the memory model has them.
  Bytes ddp_bucket;
  double zero_bucket_elements = 0.0;
  /// Format names with their placement ("4 ranks over 2 nodes"); off in the planner's inner loop.
  bool explain = true;
};

/// Adds one dimension's groups and nodes to the graph.
using Contributor = void (*)(const GraphContext& context, StepGraph& graph);

/// Tensor and sequence parallel (Megatron-LM).
void add_tensor_parallel(const GraphContext& context, StepGraph& graph);
/// Context parallel (Megatron-Core's ring, all-gather and all-to-all exchanges).
void add_context_parallel(const GraphContext& context, StepGraph& graph);
/// Pipeline parallel: the sends between stages under the plan's schedule.
void add_pipeline_parallel(const GraphContext& context, StepGraph& graph);
/// Expert parallel (Megatron-Core's MoE token dispatchers, expert tensor parallel).
void add_expert_parallel(const GraphContext& context, StepGraph& graph);
/// Data parallel: DDP, ZeRO-1/2/3 and FSDP, with MoE experts over their expert data-parallel groups.
void add_data_parallel(const GraphContext& context, StepGraph& graph);

/// Every dimension stepcast models, in the order their calls run inside a layer.
std::span<const Contributor> default_contributors();

/// The step graph of a resolved, valid plan: the stages' compute from `compute` (the operator
/// model's estimate for this plan), then each contributor in order.
StepGraph build_step_graph(const GraphContext& context, const cost::ComputeEstimate& compute,
                           std::span<const Contributor> contributors = default_contributors());

}  // namespace stepcast::graph
