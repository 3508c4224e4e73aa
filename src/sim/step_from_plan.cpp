// From a plan's analytical prediction to the step graph's figures. Terms are matched by the
// communication group and collective, never by display name.
#include "stepcast/sim/step_from_plan.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>

#include "moe_from_plan.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::sim {

namespace {

// Bytes a per-layer term moves beyond `layers` whole layers per micro-batch: the parameters
// outside the layers (embeddings), which the analytical model counts as a partial unit.
Bytes beyond_layers(const cost::CommTerm& t, int micro_batches, double layers) {
  const double per_micro_batch = t.calls / micro_batches * t.size.value();
  return Bytes(std::max(0.0, per_micro_batch - layers * t.size.value()));
}

}  // namespace

PlannedStep plan_step(const plan::Plan& plan, const cost::StepPrediction& p, const cost::Calibration* calibration) {
  PlannedStep out;
  StepSpec& s = out.spec;
  s.model.calibration = calibration;
  s.pp = plan.pp;
  s.tp = plan.tp;
  s.dp = plan.dp;
  s.vp = plan.schedule == plan::Schedule::kInterleaved ? plan.vp : 1;
  s.micro_batches = plan.micro_batches();
  s.layers = std::max(1, static_cast<int>(std::lround(p.layers_per_stage / s.vp)));
  s.schedule = plan.schedule;
  s.stride_pp = plan.tp;
  s.stride_dp = plan.tp * plan.pp;
  // Context-parallel ranks sit between pipeline and data parallel (plan.hpp): the simulator's
  // data-parallel replicas are the dp x cp ranks that reduce gradients together.
  s.dp = plan.gradient_ranks();
  const int m = s.micro_batches;
  // Each stage's forward and backward of one micro-batch, from the same operator list as the
  // analytical step (cost/compute.cpp), so the two engines time the same kernels.
  const auto& stages = p.compute_detail.stages;
  const cost::StageCompute& critical = stages[static_cast<std::size_t>(p.compute_detail.critical_stage)];
  s.forward = critical.forward;
  s.backward = critical.backward;
  s.weight_grad_share = critical.backward.value() > 0.0 ? critical.weight_grad / critical.backward : 0.5;
  for (const cost::StageCompute& st : stages) {
    s.stage_forward.push_back(st.forward);
    s.stage_backward.push_back(st.backward);
  }
  // Passes over the layers per micro-batch: forward, backward (two), and a forward again with
  // full recompute (Narayanan et al. 2021, section 3.5).
  const double passes = plan.recompute == plan::Recompute::kFull ? 4.0 : 3.0;
  TensorParallelComm tensor;
  // Two TP collectives per layer in the forward, two (four with full recompute) in the backward
  // (Shoeybi et al. 2019, Figure 4), the same count as cost/step.cpp.
  tensor.backward_slices = passes == 4.0 ? 4 : 2;
  tensor.overlap = plan.tp_overlap;
  tensor.tp = plan.tp;
  ShardedLayers sharded;
  int shard_gathers = 0;
  ContextParallelComm context;
  std::vector<std::pair<cost::CollectiveOp, Bytes>> recomputed;  // the forward's exchange, again before the backward
  const double layers = p.layers_per_stage;
  const bool grad_reduce_overlapped = plan.overlap_grad_reduce.value_or(true);
  s.expert_parallel = detail::expert_parallel_comm(plan, p);
  for (const cost::CommTerm& t : p.communication) {
    switch (t.group) {
      case cost::CommGroup::kTensor:
        tensor.ops.push_back(t.op);
        tensor.size = t.size;
        break;
      case cost::CommGroup::kPipeline:
        s.p2p_bytes = t.size;
        break;
      case cost::CommGroup::kShardGroup:
        sharded.shard_ranks = t.ranks;
        if (t.op == cost::CollectiveOp::kAllGather) {
          ++shard_gathers;
          sharded.gather = t.size;
          sharded.root_gather = beyond_layers(t, m, layers);
        } else {
          sharded.reduce_scatter = t.size;
          sharded.root_reduce_scatter = beyond_layers(t, m, layers);
        }
        break;
      case cost::CommGroup::kContext: {
        // Replayed per layer pass: the forward's calls, and under recompute again in the backward.
        const auto calls = static_cast<int>(std::lround(t.context_calls));
        auto& pass = t.context_backward ? context.backward : context.forward;
        for (int i = 0; i < calls; ++i) pass.emplace_back(t.op, t.size);
        if (!t.context_backward && plan.recompute != plan::Recompute::kNone) {
          for (int i = 0; i < calls; ++i) recomputed.emplace_back(t.op, t.size);
        }
        context.beside_compute = plan.cp_comm == plan::ContextComm::kP2p;
        break;
      }
      case cost::CommGroup::kReplicaGroup:
        sharded.replica_all_reduce = t.size;
        sharded.root_replica_all_reduce = beyond_layers(t, m, layers);
        break;
      case cost::CommGroup::kExpertData:
        if (t.ranks == plan.dp && t.op != cost::CollectiveOp::kAllGather) {
          // Without expert parallel the experts' gradients reduce over the data-parallel group itself.
          s.syncs.push_back(
              GradientSync{t.name, t.op, t.size, t.calls, plan.zero_stage() == 2, grad_reduce_overlapped});
          break;
        }
        if (t.ranks == plan.dp) {
          s.parameter_gather +=
              t.size * t.calls;  // ZeRO-1/2: the experts' updated parameters, gathered with the others
          break;
        }
        // Fewer expert data-parallel ranks than dp: the expert groups of the stage's folding.
        STEPCAST_ASSERT(s.expert_parallel.has_value(),
                        "an expert data-parallel group smaller than dp comes with expert parallel");
        if (t.op == cost::CollectiveOp::kAllGather) {
          s.expert_parallel->parameter_gather = t.size;
        } else {
          s.syncs.push_back(
              GradientSync{t.name, t.op, t.size, t.calls, plan.zero_stage() == 2, grad_reduce_overlapped, true});
        }
        break;
      case cost::CommGroup::kExpert:
        break;  // one MoE block's calls, taken above
      case cost::CommGroup::kExpertShardGroup:
        // FSDP / ZeRO-3 with expert parallel: one MoE block's experts, beside its layer's dense unit.
        STEPCAST_ASSERT(s.expert_parallel.has_value(), "an expert shard group comes with expert parallel");
        (t.op == cost::CollectiveOp::kAllGather ? s.expert_parallel->shard_gather
                                                : s.expert_parallel->shard_reduce_scatter) = t.size;
        break;
      case cost::CommGroup::kData:
        if (t.op == cost::CollectiveOp::kAllGather) {
          // ZeRO-1/2: updated parameters gathered after the optimizer, or in buckets beside the
          // next step's first forward (overlap-param-gather=on).
          s.parameter_gather = t.size * t.calls;
          s.parameter_gather_bucket = t.size;
          s.parameter_gather_before_forward = plan.overlap_param_gather.value_or(false);
        } else {
          // ZeRO-2 reduce-scatters each micro-batch's gradients (ZeRO section 5.2).
          s.syncs.push_back(
              GradientSync{t.name, t.op, t.size, t.calls, plan.zero_stage() == 2, grad_reduce_overlapped});
        }
        break;
    }
  }
  if (!tensor.ops.empty()) s.tensor_parallel = tensor;
  if (plan.cp > 1) {
    context.cp = plan.cp;
    context.backward.insert(context.backward.begin(), recomputed.begin(), recomputed.end());
    s.context_parallel = context;
  }
  if (shard_gathers > 0) {
    // FULL_SHARD and ZeRO-3 gather for the forward and again for the backward; SHARD_GRAD_OP once.
    sharded.regather = shard_gathers == 2;
    s.sharded = sharded;
  }
  s.optimizer = p.optimizer;
  if (plan.uneven_pipeline()) {
    out.notes.push_back(fmt::format(
        "uneven pipeline: every stage keeps its own compute time, replayed in the slowest stage's {} layers of slices",
        s.layers));
  }
  return out;
}

}  // namespace stepcast::sim
