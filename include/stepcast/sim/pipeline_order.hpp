// The order in which one pipeline stage runs its forward and backward tasks under each schedule:
// GPipe (Huang et al. 2019), 1F1B and interleaved 1F1B (Narayanan et al. 2021, section 2.2),
// and ZB-H1 (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", section 3: backward split into
// input-gradient B and weight-gradient W, W deferred to fill the cool-down bubble).
#pragma once

#include <vector>

#include "stepcast/plan/plan.hpp"

namespace stepcast::sim {

struct PipelineOp {
  enum class Kind { kForward, kBackward, kWeightGrad };
  Kind kind = Kind::kForward;
  int micro_batch = 0;
  int chunk = 0;  ///< model chunk (virtual stage chunk * pp + stage); 0 without interleaving
};

/// The tasks of `stage` (0-based of `pp`) for `micro_batches` micro-batches and `chunks` model
/// chunks per stage, in execution order. Preconditions: interleaving needs micro_batches % pp == 0.
std::vector<PipelineOp> pipeline_order(plan::Schedule schedule, int pp, int stage, int micro_batches, int chunks);

}  // namespace stepcast::sim
