// Model state and buffers of an MoE plan: dense parameters split over tp x pp and sharded over
// dp, routed experts split over etp x ep x pp and sharded over the expert data-parallel ranks,
// and the routing and all-to-all buffers of one MoE block.
#pragma once

#include "stepcast/core/units.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::cost {

/// How one GPU holds an MoE model's parameters (counts, not bytes).
struct ExpertSplit {
  double routed = 0.0;          ///< routed-expert parameters of the whole model (MTP modules included)
  double dense = 0.0;           ///< every other parameter
  double dense_per_gpu = 0.0;   ///< dense / (tp x pp)
  double expert_per_gpu = 0.0;  ///< routed / (etp x ep x pp)
  /// Ranks ZeRO/FSDP shard each part's state over: the plan's shard group for the dense part; its
  /// expert-data-parallel share for the experts (Megatron's distributed optimizer shards expert
  /// state over the expert data-parallel group), at least 1.
  double dense_shards = 1.0;
  double expert_shards = 1.0;
};

/// Precondition: the workload has an MoE shape; the plan is resolved and valid.
ExpertSplit expert_split(const workload::Workload& workload, const plan::Plan& plan);

/// One GPU's model state of each part of the split.
struct MoeModelState {
  ModelState dense;
  ModelState experts;
};

/// ZeRO's sharding (memory.cpp's rules) applied to each part of the split.
MoeModelState moe_state_split(const workload::Workload& workload, const plan::Plan& plan);

/// The two parts together.
ModelState moe_model_state(const workload::Workload& workload, const plan::Plan& plan);

/// FSDP / ZeRO-3 units of an MoE plan, in parameters per GPU: every block is one unit whose dense
/// part (attention, router, shared experts, norms, or a dense block's MLP) shards over dp and
/// whose routed experts shard over the expert data-parallel group (TorchTitan wraps the experts
/// apart from the block, over the expert-data-parallel mesh; DeepSpeed-MoE partitions expert
/// parameters over the expert data-parallel group).
struct MoeShardUnits {
  double dense_block = 0.0;    ///< dense parameters of the blocks / layers / tp: a block's mean
  double expert_block = 0.0;   ///< routed experts of one MoE block / (etp x ep)
  double moe_share = 0.0;      ///< MoE blocks over all blocks
  double largest_block = 0.0;  ///< the block with the most parameters on one GPU, gathered whole
};

/// Precondition: the workload has an MoE shape; the plan is resolved and valid.
MoeShardUnits moe_shard_units(const workload::TransformerShape& shape, const plan::Plan& plan);

/// Per GPU and micro-batch, the token copies an MoE block sends in its dispatch (tokens x
/// top-k x hidden, in the activation type) and the rows it receives for its experts (with the
/// load factor): the all-to-all send and receive buffers, live while the block runs.
Bytes moe_dispatch_buffers(const workload::TransformerShape& shape, const plan::Plan& plan);

}  // namespace stepcast::cost
