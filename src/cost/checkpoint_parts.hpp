// The model-state parts a checkpoint holds, each with the ZeRO stage from which the plan shards it
// (Rajbhandari et al. 2020: stage 1 shards optimizer state, stage 2 also gradients, stage 3 also
// parameters). Shared by the checkpoint's size and by restoring it under another plan.
#pragma once

#include <array>
#include <string_view>

#include "stepcast/cost/checkpoint.hpp"

namespace stepcast::cost {

struct CheckpointPart {
  CheckpointContent content;
  std::string_view name;
  double bytes_per_parameter;
  int sharded_from_stage;
};

inline std::array<CheckpointPart, 3> checkpoint_parts(const StateBytesPerParameter& bytes,
                                                      const CheckpointOptions& options) {
  return {
      CheckpointPart{CheckpointContent::kParameters, "parameters", bytes.parameters, 3},
      CheckpointPart{CheckpointContent::kGradients, "gradients", options.include_gradients ? bytes.gradients : 0.0, 2},
      CheckpointPart{CheckpointContent::kOptimizerState, "optimizer state", bytes.optimizer, 1}};
}

// How many ways the plan splits the part's bytes over data-parallel ranks.
inline int data_parallel_shards(const CheckpointPart& part, const plan::Plan& plan) {
  return plan.zero_stage() >= part.sharded_from_stage ? plan.state_shards() : 1;
}

}  // namespace stepcast::cost
