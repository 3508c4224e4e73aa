// Pipeline-parallel schedules: the bubble (idle fraction) and the micro-batches whose
// activations the first stage holds at its peak.
#pragma once

#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::cost {

/// Bubble time as a fraction of the ideal (bubble-free) compute time of one step, for p stages,
/// m micro-batches and v model chunks per stage: (p-1)/m for GPipe and 1F1B, (p-1)/(v*m) for
/// interleaved 1F1B (Narayanan et al. 2021, section 2.2). 0 when p = 1. ZB-H1's bubble depends
/// on its passes' times (zb_h1_pipeline).
double bubble_fraction(plan::Schedule schedule, int p, int m, int v);

/// One micro-batch's passes through one stage under ZB-H1, each with the calls it waits for.
struct StagePasses {
  Seconds forward;      ///< F
  Seconds backward;     ///< B: the input gradients only
  Seconds weight_grad;  ///< W
};

/// A pipeline's time from the first forward to the last weight gradient, and the stage whose
/// micro-batches set it.
struct PipelineTime {
  Seconds time;
  int pacing_stage = 0;
};

/// ZB-H1 (Qi et al. 2023, section 3.1) on stages of unequal passes, m micro-batches, each stage s
/// deferring its W s micro-batches behind its B (pipeline_order): the longest of the paths that
/// run one stage c's m micro-batches back to back. Exact where the stages before the one that
/// sets the pace keep it fed (equal stages; an uneven split's last stage, which holds the output
/// layer and loss), a lower bound elsewhere. On p equal stages with B >= W and F >= W: m(F+B+W) +
/// (p-1)(F+B-W), the paper's bubble.
PipelineTime zb_h1_pipeline(const std::vector<StagePasses>& stages, int m);

/// Micro-batches' worth of a stage's layers that the first stage holds at its peak: m for GPipe
/// (all forwards before any backward), min(p, m) for 1F1B and ZB-H1, and for interleaved 1F1B
/// min(p, m) x (1 + (p-1)/(p*v)) (Korthikanti et al. 2022, section 4.2.3). 1 when p = 1.
double held_microbatches(plan::Schedule schedule, int p, int m, int v);

/// Micro-batches' worth of backward passes the first stage runs after its last forward (the
/// pipeline's cooldown, which mirrors its warm-up): m for GPipe, min(p-1, m) for 1F1B and ZB-H1,
/// and for interleaved 1F1B min((p-1) x 2 + (v-1) x p, m x v) model-chunk passes over v
/// (Megatron-LM schedules.py, num_warmup_microbatches of rank 0). 0 when p = 1.
double cooldown_microbatches(plan::Schedule schedule, int p, int m, int v);

}  // namespace stepcast::cost
