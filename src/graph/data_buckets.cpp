// Bucketed data parallel: DDP all-reduces all gradients once per step in buckets (PyTorch's of
// 25 MiB, Megatron-Core's below) as the last micro-batch's backward produces them (gradient
// accumulation under no_sync; Li et al. 2020, section 3.2). ZeRO-1/2 reduce-scatter them to their
// owners in buckets (ZeRO-2 every micro-batch in DeepSpeed's reduce_bucket_size ones, ZeRO-1 once
// per step in Megatron-Core's), and after the optimizer each owner's updated parameters are
// all-gathered (ZeRO section 7), or under overlap-param-gather=on bucket by bucket beside the next
// step's first forward, each before the layers it holds (Megatron-LM's distributed optimizer:
// megatron/core/distributed/param_and_grad_buffer.py).
#include <algorithm>
#include <limits>

#include "data_parallel.hpp"
#include "graph_support.hpp"
#include "stepcast/cost/moe_memory.hpp"

namespace stepcast::graph::detail {

namespace {

/// The data group as it runs on every stage at once: with the stages inside each replica, each
/// stage's groups share the NICs of the replica's nodes with the other stages' (tp x pp groups
/// side by side); with the stages outermost, a group that leaves its node has the stage's nodes
/// to itself and its tensor-parallel peers, as when one stage runs.
std::size_t every_stage_group(StepGraph& graph, std::size_t data_group) {
  if (graph.layout.stages_outermost || graph.layout.pp == 1) return data_group;
  GroupSpec shared = graph.groups[data_group];
  shared.concurrency = topology::Concurrency{graph.layout.tp * graph.layout.pp, 1};
  return graph.add_group(std::move(shared));
}

/// The updated parameters' all-gather over `group`: after the optimizer, or at the step's start.
CommNode parameter_gather(const plan::Plan& p, std::string name, std::size_t group, Bytes weights,
                          double bucket_elements, double parameter_bytes) {
  CommNode node;
  node.name = std::move(name);
  node.group = group;
  node.op = cost::CollectiveOp::kAllGather;
  node.size = weights;
  node.anchor = Anchor::kAfterOptimizer;
  if (p.overlap_param_gather.value_or(false)) {
    node.anchor = Anchor::kStepStart;
    node.size = std::min(weights, Bytes(bucket_elements * parameter_bytes));
    node.pieces = weights / node.size;
  }
  return node;
}

/// Elements per gradient (and parameter) bucket of Megatron-Core's DDP (zero=1, its distributed
/// optimizer, and zero=0 with grad-reduce=) or DeepSpeed's ZeRO-2. Megatron-Core's buckets default to
/// max(40M, 1M x data-parallel size) parameters, the data-parallel group counting its
/// context-parallel ranks, and are the whole buffer when the gradients are reduced after the
/// backward (DistributedDataParallel: bucket_size = None without overlap_grad_reduce); zero=2 is
/// DeepSpeed's ZeRO-2, reduce_bucket_size elements (MemoryOptions).
double bucket_elements(const GraphContext& context) {
  const plan::Plan& p = context.plan;
  if (!p.megatron_ddp()) return context.zero_bucket_elements;
  if (!p.overlap_grad_reduce.value_or(true)) return std::numeric_limits<double>::infinity();
  constexpr double kMegatronMinBucket = 40e6;
  constexpr double kMegatronBucketPerRank = 1e6;
  return std::max(kMegatronMinBucket, kMegatronBucketPerRank * static_cast<double>(p.dp) * p.cp);
}

}  // namespace

void add_bucketed(const GraphContext& context, StepGraph& graph, const DataState& state) {
  const plan::Plan& p = context.plan;
  const std::string note = grad_reduce_note(p);
  CommNode reduce;
  reduce.group = state.data_group;
  reduce.anchor = Anchor::kGradientReady;
  reduce.overlapped = p.overlap_grad_reduce.value_or(true);
  if (p.zero_stage() == 0) {
    reduce.name = "DDP gradient all-reduce" + note;
    reduce.op = cost::CollectiveOp::kAllReduce;
    reduce.size = p.megatron_ddp() ? std::min(state.grads, Bytes(bucket_elements(context) * state.reduce_bytes))
                                   : context.ddp_bucket;
  } else {
    reduce.name = "ZeRO gradient reduce-scatter" + note;
    reduce.op = cost::CollectiveOp::kReduceScatter;
    reduce.size = std::min(state.grads, Bytes(bucket_elements(context) * state.reduce_bytes));
    reduce.every_micro_batch = p.zero_stage() == 2;
    if (reduce.every_micro_batch && p.pp > 1) {
      // ZeRO-2's reduce-scatters, issued every micro-batch, run on every stage at once in the
      // steady state, so each stage's groups share the NICs with the other stages' too.
      reduce.group = every_stage_group(graph, state.data_group);
    }
  }
  reduce.pieces = state.grads / reduce.size;
  graph.comm.push_back(reduce);
  if (p.zero_stage() == 0) return;
  // After the optimizer, the gather runs on the group (and NIC share) the reductions had.
  std::size_t gather_group = reduce.group;
  std::string name = "ZeRO parameter all-gather";
  if (p.overlap_param_gather.value_or(false)) {
    // Every stage gathers at the step's start: the stages' groups share the NICs.
    gather_group = every_stage_group(graph, state.data_group);
    name += " (beside the first forward: overlap-param-gather=on)";
  }
  graph.comm.push_back(parameter_gather(p, std::move(name), gather_group, state.weights, bucket_elements(context),
                                        state.parameter_bytes));
}

void add_expert_buckets(const GraphContext& context, StepGraph& graph, const DataState& state) {
  const plan::Plan& p = context.plan;
  const GroupSpec& group = graph.groups[state.expert_data_group];
  const double experts = cost::expert_split(context.workload, p).expert_per_gpu;
  const Bytes grads = Bytes(experts * state.reduce_bytes);
  const bool sharded = p.zero_stage() >= 1;
  CommNode reduce;
  reduce.name =
      with_placement(context, group, sharded ? "expert gradient reduce-scatter" : "expert gradient all-reduce", "edp") +
      grad_reduce_note(p);
  reduce.group = state.expert_data_group;
  reduce.op = sharded ? cost::CollectiveOp::kReduceScatter : cost::CollectiveOp::kAllReduce;
  // Megatron-Core's or DeepSpeed's buckets (bucket_elements); PyTorch's DDP its 25 MiB ones.
  const bool counted_in_elements = sharded || p.megatron_ddp();
  reduce.size =
      std::min(grads, counted_in_elements ? Bytes(bucket_elements(context) * state.reduce_bytes) : context.ddp_bucket);
  reduce.pieces = grads / reduce.size;
  reduce.anchor = Anchor::kGradientReady;
  reduce.every_micro_batch = p.zero_stage() == 2;
  reduce.overlapped = p.overlap_grad_reduce.value_or(true);
  graph.comm.push_back(reduce);
  if (!sharded) return;
  graph.comm.push_back(parameter_gather(p, with_placement(context, group, "expert parameter all-gather", "edp"),
                                        state.expert_data_group, Bytes(experts * state.parameter_bytes),
                                        bucket_elements(context), state.parameter_bytes));
}

}  // namespace stepcast::graph::detail
