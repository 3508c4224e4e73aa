// FSDP (FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD) and ZeRO-3: per micro-batch, each unit (a
// transformer block) is all-gathered before its forward, again before its backward (not under
// SHARD_GRAD_OP, which keeps it), and its gradients reduce-scattered after its backward, all in
// issue order on the stage's stream, the next unit prefetched while one computes (Zhao et al.
// 2023, PyTorch FSDP, section 3.3). HYBRID_SHARD then all-reduces each shard's gradients across
// the replicas (one rank of each shard group: the shard dimension innermost of FSDP's device mesh).
// With expert parallel each MoE block's routed experts are a unit of their own over the expert
// data-parallel group, right after its block's dense unit (TorchTitan's FSDP2 over the
// expert-data-parallel mesh).
#include <algorithm>

#include "data_parallel.hpp"
#include "graph_support.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/moe_memory.hpp"

namespace stepcast::graph::detail {

namespace {

/// The most transformer layers a stage holds (all its model chunks).
int stage_layers(const StepGraph& graph) {
  int most = 0;
  for (const StageWork& st : graph.stages) most = std::max(most, st.layers());
  return most;
}

/// Gathers before each pass (the backward's unless kept; `late`: each issued as the layer before
/// ends) and the reduce-scatter after it.
void add_unit(StepGraph& graph, CommNode node, bool regather, bool late, Bytes unit, Bytes unit_grads, Bytes root,
              Bytes root_grads, std::string_view forward, std::string_view backward, std::string_view reduce) {
  node.op = cost::CollectiveOp::kAllGather;
  node.anchor = Anchor::kLayerPrefetch;
  node.size = unit;
  node.root = root;
  node.pass = Pass::kForward;
  node.name = std::string(forward);
  graph.comm.push_back(node);
  if (regather) {
    node.pass = Pass::kBackward;
    node.name = std::string(backward);
    node.after_layer = late;
    graph.comm.push_back(node);
    node.after_layer = false;
  }
  node.op = cost::CollectiveOp::kReduceScatter;
  node.anchor = Anchor::kLayerEnd;
  node.pass = Pass::kBackward;
  node.size = unit_grads;
  node.root = root_grads;
  node.name = std::string(reduce);
  graph.comm.push_back(std::move(node));
}

}  // namespace

void add_sharded(const GraphContext& context, StepGraph& graph, const DataState& state) {
  const plan::Plan& p = context.plan;
  const workload::TransformerShape& shape = *context.workload.shape;
  const bool hybrid = p.sharding == plan::Sharding::kFsdpHybrid;
  const bool regather = p.zero_stage() == 3;
  const Layout layout = graph.layout;
  GroupSpec shard = graph.groups[state.data_group];
  shard.role = "shard group";
  if (hybrid) {
    // Shard groups are consecutive replicas.
    shard.ranks = p.shard_group;
    const int size = p.shard_group;
    shard.members = [layout, size](int stage) { return replica_blocks(layout, stage, size); };
  }
  CommNode node;
  node.group = graph.add_group(std::move(shard));
  double unit_parameters = cost::layer_parameter_count_per_rank(shape, p);
  std::optional<cost::MoeShardUnits> moe;
  if (shape.moe) {
    moe = cost::moe_shard_units(shape, p);
    // A block's mean on one GPU, its routed experts in it when they shard over dp.
    unit_parameters = moe->dense_block + (state.experts_apart ? 0.0 : moe->expert_block * moe->moe_share);
  }
  const Bytes unit = Bytes(unit_parameters * state.parameter_bytes);
  const Bytes unit_grads = Bytes(unit_parameters * state.reduce_bytes);
  // The parameters outside the layers (embeddings) ride with the first layer's unit.
  const double layers = stage_layers(graph);
  const Bytes root = std::max(Bytes(0.0), state.weights - unit * layers);
  const Bytes root_grads = std::max(Bytes(0.0), state.grads - unit_grads * layers);
  // PyTorch FSDP's BACKWARD_POST gathers the next unit after the current one's gradients.
  const bool late = p.fsdp_prefetch == plan::FsdpPrefetch::kBackwardPost;
  add_unit(graph, node, regather, late, unit, unit_grads, root, root_grads, "FSDP all-gather (forward)",
           "FSDP all-gather (backward)", "FSDP gradient reduce-scatter");
  if (moe && state.experts_apart && p.expert_dp() > 1) {
    GroupSpec experts = graph.groups[state.expert_data_group];
    experts.role = "expert shard group";
    CommNode expert;
    expert.group = graph.add_group(std::move(experts));
    expert.per_layer = moe_blocks_per_layer(graph);
    const GroupSpec& g = graph.groups[expert.group];
    add_unit(graph, expert, regather, late, Bytes(moe->expert_block * state.parameter_bytes),
             Bytes(moe->expert_block * state.reduce_bytes), Bytes(0.0), Bytes(0.0),
             with_placement(context, g, "FSDP expert all-gather", "forward; edp"),
             with_placement(context, g, "FSDP expert all-gather", "backward; edp"),
             with_placement(context, g, "FSDP expert gradient reduce-scatter", "edp"));
  }
  if (hybrid && p.dp / p.shard_group > 1) {
    GroupSpec replicas = graph.groups[state.data_group];
    replicas.role = "replicas";
    replicas.ranks = p.dp / p.shard_group;
    replicas.stride = layout.replica_stride() * p.shard_group;
    // Every position in the shard group (and every tensor rank) has its replica group,
    // consecutive GPUs when tp x shard positions are (a stage's GPUs contiguous).
    if (p.pp == 1 || layout.stages_outermost) replicas.concurrency = topology::Concurrency{p.tp * p.shard_group, 1};
    const int size = p.shard_group;
    replicas.members = [layout, size](int stage) {
      GroupSets groups;
      for (int t = 0; t < layout.tp; ++t) {
        for (int q = 0; q < size; ++q) {
          std::vector<int> g;
          for (int r = q; r < layout.replicas; r += size) g.push_back(layout.gpu(r, stage, t));
          groups.push_back(std::move(g));
        }
      }
      return groups;
    };
    CommNode all_reduce;
    all_reduce.name = "HSDP gradient all-reduce (replicas)";
    all_reduce.group = graph.add_group(std::move(replicas));
    all_reduce.op = cost::CollectiveOp::kAllReduce;
    all_reduce.anchor = Anchor::kLayerEnd;
    all_reduce.pass = Pass::kBackward;
    all_reduce.size = unit_grads / p.shard_group;
    all_reduce.root = root_grads / p.shard_group;
    graph.comm.push_back(std::move(all_reduce));
  }
}

}  // namespace stepcast::graph::detail
