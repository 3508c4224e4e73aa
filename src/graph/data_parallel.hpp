// The data-parallel contributor's pieces (private to graph/): what every strategy reduces and
// gathers, and the strategies' nodes.
#pragma once

#include "stepcast/graph/contributors.hpp"

namespace stepcast::graph::detail {

/// The model state one data-parallel rank synchronises, as its strategy moves it.
struct DataState {
  Bytes grads;                   ///< the gradients to reduce, in the type they are reduced in
  Bytes weights;                 ///< the parameters to gather, in their working type
  double reduce_bytes = 0.0;     ///< per gradient element
  double parameter_bytes = 0.0;  ///< per parameter
  /// MoE: the routed experts are units (FSDP) or buckets (DDP, ZeRO-1/2) of their own, over the
  /// expert data-parallel group; false where they ride with the dense state.
  bool experts_apart = false;
  std::size_t data_group = 0;         ///< the dp x cp ranks of each tensor rank
  std::size_t expert_data_group = 0;  ///< the experts' edp ranks (MoE only)
};

DataState data_state(const GraphContext& context, StepGraph& graph);

/// DDP, ZeRO-1/2: gradient buckets and the updated parameters' gather.
void add_bucketed(const GraphContext& context, StepGraph& graph, const DataState& state);
/// FSDP and ZeRO-3: per-layer gathers and reduce-scatters.
void add_sharded(const GraphContext& context, StepGraph& graph, const DataState& state);
/// MoE experts outside the layers' units: their own buckets over the expert data-parallel group.
void add_expert_buckets(const GraphContext& context, StepGraph& graph, const DataState& state);

/// " (after the backward: overlap-grad-reduce=off)" when buckets wait for the backward's end.
std::string grad_reduce_note(const plan::Plan& plan);

}  // namespace stepcast::graph::detail
