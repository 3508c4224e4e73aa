// Pipeline-parallel schedules: a step's time from each stage's passes, and the micro-batches whose
// activations the first stage holds at its peak.
#pragma once

#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::cost {

/// One micro-batch's passes through one stage (all its model chunks), each with the calls it
/// waits for.
struct StagePasses {
  Seconds forward;      ///< F
  Seconds backward;     ///< B: the input gradients only
  Seconds weight_grad;  ///< W
  /// Interleaved 1F1B: each model chunk's F and B (W inside), in chunk order; empty: the passes
  /// split evenly over the chunks.
  std::vector<Seconds> chunk_forward;
  std::vector<Seconds> chunk_backward;
};

/// A pipeline's time from the first forward to the last backward or weight gradient, and the stage
/// whose micro-batches set it.
struct PipelineTime {
  Seconds time;
  int pacing_stage = 0;
};

/// The schedule's time on stages of unequal passes, m micro-batches and v model chunks a stage,
/// each transfer between stages taking `hop`: the senders of GPipe, 1F1B and ZB-H1 wait for it
/// (Megatron-LM's blocking p2p calls), interleaved 1F1B's hide it behind the next chunk but for
/// the fill and the drain. Each closed form below takes the longest path through the schedule
/// that runs one stage's micro-batches back to back; it is exact where the stages before the one
/// that sets the pace keep it fed (equal stages, the slowest one last) and a lower bound
/// elsewhere, where a path crosses stages more than once.
PipelineTime pipeline_time(plan::Schedule schedule, std::vector<StagePasses> stages, int m, int v, Seconds hop);

/// GPipe (Huang et al. 2019): every forward, then every backward (W inside B). The forwards take
/// each stage's F once and the slowest F m-1 more times, the backwards alike: sum F + sum B +
/// (m-1)(max F + max B), exact. The stage of the largest F + B paces it.
PipelineTime gpipe_pipeline(const std::vector<StagePasses>& stages, int m);

/// 1F1B (Narayanan et al. 2021, section 2.2.1): ZB-H1 with each stage's W run inside its B,
/// nothing deferred. On p equal stages, (m+p-1)(F+B); with the slowest stage last, m times its
/// F + B plus the others'. A stage slower than those after it runs its warm-up forwards while
/// micro-batch 0 goes there and back, so it waits less than that.
PipelineTime one_f_one_b_pipeline(std::vector<StagePasses> stages, int m);

/// ZB-H1 (Qi et al. 2023, section 3.1), each stage s deferring its W s micro-batches behind its B
/// (pipeline_order). On p equal stages with B >= W and F >= W: m(F+B+W) + (p-1)(F+B-W), the
/// paper's bubble.
PipelineTime zb_h1_pipeline(const std::vector<StagePasses>& stages, int m);

/// Interleaved 1F1B (Narayanan et al. 2021, section 2.2.2; Megatron-LM's schedules.py warm-up and
/// cool-down), each chunk's passes its own (StagePasses::chunk_forward). On p equal stages without
/// transfers, m v (f+b) + (p-1)(f+b) for a chunk's f and b: the bubble (p-1)/(v m).
PipelineTime interleaved_pipeline(const std::vector<StagePasses>& stages, int m, int v, Seconds hop);

/// Micro-batches' worth of a stage's layers that the first stage holds at its peak: m for GPipe
/// (all forwards before any backward), min(p, m) for 1F1B and ZB-H1, and for interleaved 1F1B
/// min(p, m) x (1 + (p-1)/(p*v)) (Korthikanti et al. 2022, section 4.2.3). 1 when p = 1.
double held_microbatches(plan::Schedule schedule, int p, int m, int v);

/// Micro-batches' worth of a stage's layers a plan's stage k holds beyond its schedule's count:
/// under moe-overlap=on the interleaved schedule runs one more model chunk's forward before its
/// steady state (Megatron-LM schedules.py: "we schedule one extra micro-batch forward step before
/// the 1f1b stages" when overlap_moe_expert_parallel_comm is on), 1/v of a micro-batch; 0 otherwise.
double overlap_extra_microbatches(const plan::Plan& plan);

/// The plan's first stage at its peak: its schedule's held_microbatches and the overlap's chunk.
double held_microbatches(const plan::Plan& plan);

/// Micro-batches' worth of backward passes the first stage runs after its last forward (the
/// pipeline's cooldown, which mirrors its warm-up): m for GPipe, min(p-1, m) for 1F1B and ZB-H1,
/// and for interleaved 1F1B min((p-1) x 2 + (v-1) x p, m x v) model-chunk passes over v
/// (Megatron-LM schedules.py, num_warmup_microbatches of rank 0). 0 when p = 1.
double cooldown_microbatches(plan::Schedule schedule, int p, int m, int v);

/// Micro-batches' worth of forward passes the first stage runs before its first backward, which
/// is also the backward passes it runs after its last forward: the passes moe-overlap=on cannot
/// pair with one of the other pass (Megatron-Core's combined_1f1b.py). m for GPipe; otherwise the
/// warm-up and the first steady forward (sim::pipeline_order's orders), 1 without a pipeline (the
/// first forward, the last backward); for interleaved 1F1B in model-chunk passes over v.
double unpaired_microbatches(plan::Schedule schedule, int p, int m, int v);

}  // namespace stepcast::cost
