// Model state of an MoE plan (Megatron-core's parallel folding: dense layers over tp x dp,
// experts over etp x ep x edp, the same GPUs) and the dispatch buffers of one MoE block.
#include "stepcast/cost/moe_memory.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/muon.hpp"
#include "stepcast/cost/operators.hpp"

namespace stepcast::cost {

ExpertSplit expert_split(const workload::Workload& workload, const plan::Plan& plan) {
  STEPCAST_ASSERT(workload.shape && workload.shape->moe, "expert_split needs an MoE workload");
  const auto& s = *workload.shape;
  ExpertSplit out;
  const double moe_blocks = s.moe_weight_blocks();
  out.routed = moe_blocks * s.moe->experts * workload::expert_parameter_count(s);
  out.dense = workload.parameters - out.routed;
  // LatentMoE's projections are duplicated on every tp rank (Megatron-Core's MoELayer builds
  // them parallel_mode="duplicated"); the rest of the dense part is split over tp.
  const double duplicated = moe_blocks * workload::latent_projection_parameters(s);
  out.dense_per_gpu = ((out.dense - duplicated) / plan.tp + duplicated) / plan.pp;
  out.expert_per_gpu = out.routed / (static_cast<double>(plan.expert_tp()) * plan.ep * plan.pp);
  out.dense_shards = plan.state_shards();
  // The shard group's share of the expert data-parallel ranks: edp when the state is sharded
  // over all of dp x cp (ZeRO-1/2), fewer for a hybrid group.
  out.expert_shards =
      std::max(1.0, static_cast<double>(plan.state_shards()) * plan.expert_dp() / plan.gradient_ranks());
  return out;
}

MoeModelState moe_state_split(const workload::Workload& workload, const plan::Plan& plan) {
  const StateBytesPerParameter per = state_bytes_per_parameter(plan);
  const ExpertSplit split = expert_split(workload, plan);
  const int stage = plan.zero_stage();
  // ZeRO's stages (Rajbhandari et al. 2020, Figure 1) on each part, sharded over its own ranks.
  const auto part = [&](double per_gpu, double shards, const StateBytesPerParameter& bytes) {
    const auto held = [&](double bytes_per_parameter, int from_stage) {
      return Bytes(per_gpu / (stage >= from_stage ? shards : 1.0) * bytes_per_parameter);
    };
    return ModelState{held(bytes.parameters, 3), held(bytes.gradients, 2), held(bytes.optimizer, 1)};
  };
  // Under Muon the embeddings and output layer, in the dense part, keep Adam's state.
  const StateBytesPerParameter dense = with_muon_adam_share(per, plan, muon_adam_share(workload, split.dense));
  return MoeModelState{part(split.dense_per_gpu, split.dense_shards, dense),
                       part(split.expert_per_gpu, split.expert_shards, per)};
}

ModelState moe_model_state(const workload::Workload& workload, const plan::Plan& plan) {
  const MoeModelState s = moe_state_split(workload, plan);
  return ModelState{s.dense.parameters + s.experts.parameters, s.dense.gradients + s.experts.gradients,
                    s.dense.optimizer_state + s.experts.optimizer_state};
}

MoeShardUnits moe_shard_units(const workload::TransformerShape& shape, const plan::Plan& plan) {
  STEPCAST_ASSERT(shape.moe.has_value(), "moe_shard_units needs an MoE shape");
  const double experts = shape.moe->experts * workload::expert_parameter_count(shape);
  // An MoE block's attention, router, shared experts and norms: the block without its routed experts.
  const double moe_common = workload::moe_layer_parameter_count(shape) - experts;
  const double dense_block = workload::layer_parameter_count(shape);
  const int moe_layers = shape.moe_layer_count();
  const int dense_layers = shape.layers - moe_layers;
  MoeShardUnits out;
  out.dense_block = (dense_layers * dense_block + moe_layers * moe_common) / shape.layers / plan.tp;
  out.expert_block = experts / (static_cast<double>(plan.expert_tp()) * plan.ep);
  out.moe_share = static_cast<double>(moe_layers) / shape.layers;
  out.largest_block = moe_common / plan.tp + out.expert_block;
  if (dense_layers > 0) out.largest_block = std::max(out.largest_block, dense_block / plan.tp);
  return out;
}

Bytes moe_dispatch_buffers(const workload::TransformerShape& shape, const plan::Plan& plan) {
  OperatorContext ctx = operator_context(plan);
  ctx.kind.moe = true;
  const double e = ctx.activation_bytes;
  const double sent = routed_tokens_per_gpu(ctx) * shape.moe->top_k * shape.expert_width() * e;
  const double received = expert_rows_per_gpu(shape, ctx) * shape.expert_width() * e;
  return Bytes(sent + received);
}

}  // namespace stepcast::cost
