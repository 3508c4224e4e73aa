// Per-stage task orders. 1F1B: pp-stage-1 warm-up forwards, then one forward one backward, then
// the remaining backwards. Interleaved: Megatron-LM's schedule (schedules.py,
// forward_backward_pipelining_with_interleaving): virtual micro-batch k runs chunk (k/pp) mod v
// of micro-batch (k/(pp v)) pp + k mod pp, warm-up (pp-stage-1)*2 + (v-1)*pp.
#include "stepcast/sim/pipeline_order.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"

namespace stepcast::sim {

namespace {

using Kind = PipelineOp::Kind;

PipelineOp virtual_op(Kind kind, int k, int pp, int chunks) {
  const int group = k / pp;
  int chunk = group % chunks;
  if (kind != Kind::kForward) chunk = chunks - 1 - chunk;
  const int micro_batch = (k / (pp * chunks)) * pp + k % pp;
  return PipelineOp{kind, micro_batch, chunk};
}

}  // namespace

std::vector<PipelineOp> pipeline_order(plan::Schedule schedule, int pp, int stage, int micro_batches, int chunks) {
  STEPCAST_ASSERT(pp >= 1 && stage >= 0 && stage < pp && micro_batches >= 1 && chunks >= 1, "valid pipeline shape");
  std::vector<PipelineOp> ops;
  const int m = micro_batches;
  switch (schedule) {
    case plan::Schedule::kGpipe:
      for (int i = 0; i < m; ++i) ops.push_back({Kind::kForward, i, 0});
      for (int i = 0; i < m; ++i) ops.push_back({Kind::kBackward, i, 0});
      break;
    case plan::Schedule::k1F1B:
    case plan::Schedule::kZbH1: {
      const int warm = std::min(pp - stage - 1, m);
      const bool zb = schedule == plan::Schedule::kZbH1;
      int weights = 0;  // next weight-gradient task to emit under ZB-H1
      const auto backward = [&](int i) {
        ops.push_back({Kind::kBackward, i, 0});
        // ZB-H1 (Qi et al. 2023, section 3.1) runs stage s's W s micro-batches after its B: a
        // later stage holds fewer micro-batches under 1F1B (p - s), so s pending W's keep it
        // within the first stage's p, 1F1B's peak; the B's, shorter without their W, bring the
        // gradients down the pipeline sooner, and the deferred W's fill the cool-down.
        if (zb && i - weights >= stage) ops.push_back({Kind::kWeightGrad, weights++, 0});
      };
      for (int i = 0; i < warm; ++i) ops.push_back({Kind::kForward, i, 0});
      for (int i = 0; i < m - warm; ++i) {
        ops.push_back({Kind::kForward, warm + i, 0});
        backward(i);
      }
      for (int i = m - warm; i < m; ++i) backward(i);
      while (zb && weights < m) ops.push_back({Kind::kWeightGrad, weights++, 0});
      break;
    }
    case plan::Schedule::kInterleaved: {
      STEPCAST_ASSERT(chunks == 1 || m % pp == 0, "interleaving needs micro-batches divisible by pp");
      const int total = m * chunks;
      const int warm =
          chunks == 1 ? std::min(pp - stage - 1, m) : std::min((pp - stage - 1) * 2 + (chunks - 1) * pp, total);
      for (int k = 0; k < warm; ++k) ops.push_back(virtual_op(Kind::kForward, k, pp, chunks));
      for (int k = 0; k < total - warm; ++k) {
        ops.push_back(virtual_op(Kind::kForward, warm + k, pp, chunks));
        ops.push_back(virtual_op(Kind::kBackward, k, pp, chunks));
      }
      for (int k = total - warm; k < total; ++k) ops.push_back(virtual_op(Kind::kBackward, k, pp, chunks));
      break;
    }
  }
  return ops;
}

}  // namespace stepcast::sim
