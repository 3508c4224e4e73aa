// Data parallel, by sharding strategy: PyTorch DDP (Li et al. 2020), DeepSpeed ZeRO-1/2/3
// (Rajbhandari et al. 2020), Megatron-LM's distributed optimizer, PyTorch FSDP (Zhao et al. 2023).
// A data-parallel group is the dp x cp ranks of one tensor rank of one stage (tp x pp GPUs apart),
// all holding the same weights. MoE plans reduce their routed experts over the expert
// data-parallel group (Megatron-Core's expert_data_parallel_group).
#include "data_parallel.hpp"

#include "expert_groups.hpp"
#include "graph_support.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/moe_memory.hpp"
#include "stepcast/cost/peft.hpp"

namespace stepcast::graph {

namespace detail {

std::string grad_reduce_note(const plan::Plan& plan) {
  // Megatron-LM without --overlap-grad-reduce reduces them in finalize_model_grads.
  return plan.overlap_grad_reduce.value_or(true) ? "" : " (after the backward: overlap-grad-reduce=off)";
}

DataState data_state(const GraphContext& context, StepGraph& graph) {
  const plan::Plan& p = context.plan;
  const workload::Workload& w = context.workload;
  const cost::StateBytesPerParameter per = cost::state_bytes_per_parameter(p.precision, p.optimizer);
  DataState s;
  // FSDP / ZeRO-3 (and SHARD_GRAD_OP) gather and reduce-scatter per block: an MoE plan's routed
  // experts ride in the block's unit when they shard over dp (ep = 1).
  const bool per_block_units = p.zero_stage() == 3 || p.sharding == plan::Sharding::kFsdpGradOp;
  const bool experts_in_blocks = w.shape->moe && per_block_units && p.ep == 1;
  s.experts_apart = w.shape->moe && !experts_in_blocks;
  // Only trained parameters reduce and gather: the adapters under peft=lora.
  double params = cost::parameters_per_model_rank(w, p).trained;
  if (w.shape->moe) {
    const cost::ExpertSplit split = cost::expert_split(w, p);
    params = split.dense_per_gpu + (experts_in_blocks ? split.expert_per_gpu : 0.0);
  }
  // Gradients travel in the type they are reduced in (grad-reduce=), else their own.
  s.reduce_bytes = p.grad_reduce ? (*p.grad_reduce == plan::Precision::kFp32 ? 4.0 : 2.0) : per.gradients;
  // fp8-params=on: the distributed optimizer gathers the quantized weights in their format
  // (Megatron-Core's --fp8-param-gather), the embedding and output layer in 16-bit.
  const double fp8 = cost::fp8_weight_share(w, p);
  s.parameter_bytes = per.parameters;
  if (fp8 > 0.0)
    s.parameter_bytes = per.parameters * (1.0 - fp8) + cost::quantized_bytes_per_element(p.precision) * fp8;
  s.grads = Bytes(params * s.reduce_bytes);
  s.weights = Bytes(params * s.parameter_bytes);
  const Layout layout = graph.layout;
  GroupSpec data{"data",
                 p.gradient_ranks(),
                 layout.replica_stride(),
                 topology::Concurrency{p.tp, 1},
                 Representation::kEveryGroup,
                 [layout](int stage) { return replica_blocks(layout, stage, layout.replicas); }};
  s.data_group = graph.add_group(std::move(data));
  if (w.shape->moe) {
    // The same expert-TP and expert-parallel position in every fold of etp x ep GPUs: etp x ep
    // dense positions apart, as many replicas' strides once a group reaches past a stage's
    // tensor ranks.
    const ExpertFold fold{p.expert_tp(), p.ep};
    const int span = fold.etp * fold.ep;
    GroupSpec experts{"expert data parallel",
                      p.expert_dp(),
                      span >= p.tp ? span / p.tp * layout.replica_stride() : span,
                      topology::Concurrency{span >= p.tp ? p.tp : 1, 1},
                      Representation::kEveryGroup,
                      [layout, fold](int stage) { return fold.data_groups(layout, stage); }};
    s.expert_data_group = graph.add_group(std::move(experts));
  }
  return s;
}

}  // namespace detail

void add_data_parallel(const GraphContext& context, StepGraph& graph) {
  const plan::Plan& p = context.plan;
  const detail::DataState state = detail::data_state(context, graph);
  if (p.gradient_ranks() > 1) {
    if (p.zero_stage() == 3 || p.sharding == plan::Sharding::kFsdpGradOp) {
      detail::add_sharded(context, graph, state);
    } else {
      detail::add_bucketed(context, graph, state);
    }
  }
  if (context.workload.shape->moe && state.experts_apart && p.expert_dp() > 1 &&
      !(p.zero_stage() == 3 || p.sharding == plan::Sharding::kFsdpGradOp)) {
    detail::add_expert_buckets(context, graph, state);
  }
}

}  // namespace stepcast::graph
