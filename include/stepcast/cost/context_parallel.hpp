// Context parallel (Megatron-Core): how each rank's attention runs on its s/cp tokens, and the
// exchange of keys and values (or heads) between the context-parallel ranks of every layer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/collectives.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::cost {

/// The fused attention of one rank under context parallel: the shape its kernels run at and how
/// many kernels (ring steps) it takes.
struct ContextAttention {
  GemmShape shape;       ///< batch = (sequence, head) pairs, m = queries, n = keys, k = head dim
  double kernels = 1.0;  ///< launches per pass: one per ring step under cp-comm=p2p
};

/// `heads`: (sequence, head) pairs of this tensor rank; `seq`: the whole sequence s.
/// p2p: cp ring steps, each s/cp queries against an s/cp chunk of keys (s keys in all);
/// all-gather: s/cp queries against the gathered s keys, in the 2 load-balanced chunks;
/// a2a: the whole sequence for heads/cp heads (Ulysses). cp = 1: one kernel over s x s.
ContextAttention context_attention(double heads, double seq, double head_dim, const OperatorContext& ctx);

/// One message of the context-parallel exchange of one layer, one micro-batch.
struct ContextMessage {
  std::string_view name;  ///< "CP ring K/V send/recv (forward)", ...
  CollectiveOp op = CollectiveOp::kSendRecv;
  Bytes size;           ///< nccl-tests' S of one call
  double calls = 0.0;   ///< per layer and micro-batch in its pass
  bool forward = true;  ///< a forward message (run again under recompute) or a backward one
  /// Sent while the attention of the ring step beside it computes (p2p); otherwise the
  /// attention waits for it.
  bool overlapped = false;
};

/// The messages of one layer per micro-batch (empty for cp = 1). Bytes from the K/V (or Q, K, V,
/// O) tensors of this rank's s/cp tokens after tensor parallel, in the activations' precision.
std::vector<ContextMessage> context_exchange(const workload::TransformerShape& shape, const plan::Plan& plan);

/// One context-parallel rank's share of a Mamba-2 mixer (Megatron-Core's MambaContextParallel):
/// heads / (tp x cp) of the heads over the whole sequence, and B and C's groups split with them, or
/// one group repeated over cp / groups ranks where a tensor rank holds fewer groups than cp.
struct MambaSplit {
  double heads = 0.0;
  double groups = 0.0;
  double inner = 0.0;          ///< heads x head_dim
  double conv_channels = 0.0;  ///< x, B and C: what the conv1d runs over
  double in_width = 0.0;       ///< z, x, B, C and dt: what the scan's fused kernel takes
  double group_repeats = 1.0;  ///< times each tensor rank's group of B and C is sent (cp / groups, at least 1)
};
MambaSplit mamba_split(const workload::MambaShape& m, double tp, double cp);

/// The all-to-alls of one Mamba-2 layer per micro-batch (empty for cp = 1): z, x, B, C and dt each
/// from sequence shards to head shards before the conv1d and the scan, the scan's output back
/// after it; the backward sends their gradients the other way (MambaContextParallel's
/// pre_conv_ssm and post_conv_ssm, whose all-to-alls autograd runs again reversed).
std::vector<ContextMessage> mamba_context_exchange(const workload::TransformerShape& shape, const plan::Plan& plan);

/// Exposed time of a ring's transfers in one layer pass: each step's transfer overlaps the
/// attention of that step (attention / cp), so a step exposes what its transfer takes beyond it.
Seconds ring_exposed(Seconds transfer_per_step, double steps, Seconds attention_pass, int cp);

}  // namespace stepcast::cost
