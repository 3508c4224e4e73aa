// The search space of plan search: every combination of parallel degrees, sharding, schedule,
// micro-batch size, recompute and sequence parallel for a model on a number of GPUs.
#pragma once

#include <cstddef>
#include <vector>

#include "stepcast/plan/plan.hpp"

namespace stepcast::planner {

/// What the search varies, and the fixed settings every candidate shares.
struct SearchSpace {
  int gpus = 0;           ///< GPUs every candidate uses (dp*tp*pp)
  int gpus_per_node = 8;  ///< tensor parallel is kept inside a node (see max_tp_in_node)
  int global_batch = 0;   ///< sequences per optimizer step
  int seq_len = 0;        ///< tokens per sequence; 0 = the workload's
  /// Micro-batch sizes tried: the powers of two up to this bound (and up to global_batch / dp).
  int max_micro_batch = 16;
  /// Tensor parallelism only inside a node: its two all-reduces per layer sit on the critical
  /// path and need NVLink bandwidth (Narayanan et al. 2021, section 3.3, takeaway #1). A wider
  /// tp is enumerated and rejected under its own reason, so the counts show it.
  bool max_tp_in_node = true;
  /// Context parallel tried: cp = 1 and every power of two up to this bound that divides
  /// gpus / tp, each with cp-comm=p2p (ring) and a2a (Ulysses). 1: no context parallel.
  int max_cp = 1;
  /// Precision, optimizer and flash attention come from here; the searched fields are ignored.
  plan::Plan base;
};

/// Every candidate of the space in a fixed order (the candidate id is the index), resolved but
/// not validated. Combinations that differ in name only are generated once:
/// - tp: every divisor of gpus; cp: 1 and the powers of two up to max_cp dividing gpus / tp,
///   with cp-comm p2p and a2a; pp: every divisor of gpus / (tp * cp); dp = gpus / (tp * cp * pp);
///   a pp that does not divide the layers but divides layers + 2 counts the embedding and loss
///   as layers (pp-embedding-loss-layers=on, as Llama 3 did); one that divides neither gives the
///   middle stages ceil(layers / pp) and the first and last the rest (pp-first-layers=,
///   pp-last-layers=) when each gets 1 to that many;
/// - schedule: with pp = 1 only 1F1B (no pipeline, the schedule has no effect); with pp > 1
///   GPipe, 1F1B, ZB-H1 (vp = 1) and interleaved 1F1B with every vp >= 2 that divides every
///   stage's layers (other vp break the layer rule by construction; interleaving one chunk is 1F1B);
/// - sharding: with dp = 1 only DDP (nothing to shard); with dp > 1 DDP, ZeRO-1/2/3, FSDP
///   FULL_SHARD, SHARD_GRAD_OP, and HYBRID_SHARD over the node (shard group = gpus_per_node /
///   (tp*pp) when that is between 2 and dp-1 and divides dp). FSDP NO_SHARD is DDP and is left out;
/// - micro-batch size: powers of two up to min(max_micro_batch, global_batch / dp);
/// - recompute: none, selective, full;
/// - sequence parallel: off, and on when tp > 1, then also with tp-overlap=on;
/// - rank order: Megatron-Core's default (stages outermost), and with pp > 1, dp x cp > 1 and tp
///   below gpus_per_node also each replica's stages on nearby ranks (order=tp-pp-cp-ep-dp);
/// - MoE: every ep dividing the experts with etp = tp or 1 that folds into a stage's GPUs, and
///   with etp = 1 and ep above gpus_per_node (tokens cross scale-up domains) each plan also with
///   moe-dispatcher=flex, unless the base plan names its dispatcher.
std::vector<plan::Plan> enumerate_candidates(const SearchSpace& space, const workload::Workload& workload);

/// enumerate_candidates(space, workload).size(), without building the candidates: what a search
/// would cost is known before its memory is spent (a wide space holds millions of plans).
std::size_t count_candidates(const SearchSpace& space, const workload::Workload& workload);

}  // namespace stepcast::planner
