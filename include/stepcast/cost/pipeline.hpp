// Pipeline-parallel schedules: the bubble (idle fraction) and the micro-batches whose
// activations the first stage holds at its peak.
#pragma once

#include "stepcast/plan/plan.hpp"

namespace stepcast::cost {

/// Bubble time as a fraction of the ideal (bubble-free) compute time of one step, for p stages,
/// m micro-batches and v model chunks per stage: (p-1)/m for GPipe and 1F1B, (p-1)/(v*m) for
/// interleaved 1F1B (Narayanan et al. 2021, section 2.2), (p-1)/(3m) for ZB-H1 (Qi et al. 2023,
/// with forward, input-backward and weight-backward passes of equal time). 0 when p = 1.
double bubble_fraction(plan::Schedule schedule, int p, int m, int v);

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
