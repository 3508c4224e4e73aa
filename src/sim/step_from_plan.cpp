// From a plan's analytical prediction to the step graph's figures. Terms are matched by the
// communication group and collective, never by display name.
#include "stepcast/sim/step_from_plan.hpp"

#include <cmath>
#include <fmt/format.h>

namespace stepcast::sim {

PlannedStep plan_step(const plan::Plan& plan, const cost::StepPrediction& p) {
  PlannedStep out;
  StepSpec& s = out.spec;
  s.pp = plan.pp;
  s.tp = plan.tp;
  s.dp = plan.dp;
  s.vp = plan.schedule == plan::Schedule::kInterleaved ? plan.vp : 1;
  s.micro_batches = plan.micro_batches();
  s.schedule = plan.schedule;
  s.stride_pp = plan.tp;
  s.stride_dp = plan.tp * plan.pp;
  const double m = s.micro_batches;
  // Passes over the layers per micro-batch: forward, backward (two), and a forward again with
  // full recompute (Narayanan et al. 2021, section 3.5).
  const double passes = plan.recompute == plan::Recompute::kFull ? 4.0 : 3.0;
  const Seconds per_mb = p.compute / m;
  s.forward = per_mb / passes;
  s.backward = per_mb * ((passes - 1.0) / passes);
  // TP collectives: 2 per layer in the forward, 2 (4 with full recompute) in the backward
  // (Shoeybi et al. 2019, Figure 4), the same split as cost/step.cpp.
  const double tp_calls = passes == 4.0 ? 6.0 : 4.0;
  const bool zero12 = plan.zero_stage() >= 1 && plan.zero_stage() <= 2 && !plan.is_fsdp();
  const bool sharded3 = plan.is_fsdp() || plan.zero_stage() == 3;
  for (const cost::CommTerm& t : p.communication) {
    switch (t.group) {
      case cost::CommGroup::kTensor:
        s.tp_forward += t.time / m * (2.0 / tp_calls);
        s.tp_backward += t.time / m * ((tp_calls - 2.0) / tp_calls);
        break;
      case cost::CommGroup::kPipeline: s.p2p_bytes = t.size; break;
      case cost::CommGroup::kData:
      case cost::CommGroup::kShardGroup:
      case cost::CommGroup::kReplicaGroup:
        if (sharded3) {
          s.fixed_exposed += t.exposed;
        } else if (zero12 && t.op == cost::CollectiveOp::kAllGather) {
          s.post_optimizer += t.time;
        } else {
          s.syncs.push_back(GradientSync{t.name, t.op, t.size, t.calls});
        }
        break;
    }
  }
  s.optimizer = p.optimizer;
  if (sharded3) {
    out.notes.push_back("FSDP/ZeRO-3 parameter gathers and gradient reduce-scatters are added at their analytical "
                        "exposed time, not simulated as flows");
  }
  if (zero12) out.notes.push_back("ZeRO parameter all-gather after the optimizer is added at its analytical time");
  if (plan.zero_stage() == 2 && !plan.is_fsdp()) {
    out.notes.push_back("ZeRO-2 per-micro-batch gradient reduce-scatters run as buckets after the last backward");
  }
  return out;
}

}  // namespace stepcast::sim
