// The MoE blocks of a simulated step: each layer that holds MoE blocks runs their dispatch,
// expert-TP and combine collectives as flows over the groups Megatron-core folds a stage's GPUs
// into (every GPU of an expert-parallel group to every other, on the links the group spans), the
// layer's compute waiting for them, or beside them under moe-overlap=on. The experts' own
// compute (router, grouped GEMMs at the busiest rank's load) is in the stage's compute times,
// from the same operator model as predict's.
#include <fmt/format.h>
#include <cmath>

#include "step_run.hpp"

namespace stepcast::sim::detail {

// A stage's GPUs in dense order are j = replica x tp + tensor rank; as experts, j's expert-TP
// rank is j mod etp, its expert-parallel rank (j / etp) mod ep and its expert data-parallel rank
// j / (etp x ep) (Megatron-core's RankGenerator, etp innermost). An expert-parallel group varies
// the middle index, an expert-TP group the inner one.
std::vector<std::vector<int>> StepRun::expert_groups(int s, bool expert_tp) const {
  const ExpertParallelComm& e = *spec_->expert_parallel;
  const int gpus = spec_->tp * spec_->dp;
  const int fold = e.etp * e.ep;
  const auto at = [&](int j) { return gpu(j / spec_->tp, s, j % spec_->tp); };
  std::vector<std::vector<int>> groups;
  for (int base = 0; base < gpus; base += fold) {
    const int outer = expert_tp ? e.ep : e.etp;
    for (int o = 0; o < outer; ++o) {
      std::vector<int> g;
      if (expert_tp) {
        for (int t = 0; t < e.etp; ++t) g.push_back(at(base + o * e.etp + t));
      } else {
        for (int q = 0; q < e.ep; ++q) g.push_back(at(base + q * e.etp + o));
      }
      groups.push_back(std::move(g));
    }
  }
  return groups;
}

// The same expert-TP and expert-parallel position in every block of etp x ep GPUs.
std::vector<std::vector<int>> StepRun::expert_data_groups(int s) const {
  const ExpertParallelComm& e = *spec_->expert_parallel;
  const int fold = e.etp * e.ep;
  const int edp = spec_->tp * spec_->dp / fold;
  std::vector<std::vector<int>> groups;
  for (int i = 0; i < fold; ++i) {
    std::vector<int> g;
    for (int d = 0; d < edp; ++d) {
      const int j = d * fold + i;
      g.push_back(gpu(j / spec_->tp, s, j % spec_->tp));
    }
    groups.push_back(std::move(g));
  }
  return groups;
}

// The MoE blocks of a stage spread over the layers of each task (one model chunk's pass) as
// evenly as whole blocks allow; the experts' updated-parameter gather under ZeRO-1/2, or their
// per-block gathers and reduce-scatters under FSDP / ZeRO-3.
void StepRun::build_expert_stage(int s) {
  const ExpertParallelComm& e = *spec_->expert_parallel;
  Stage& st = stages_[static_cast<std::size_t>(s)];
  const auto i = static_cast<std::size_t>(s);
  const double per_task = (i < e.stage_blocks.size() ? e.stage_blocks[i] : 0.0) / spec_->vp;
  const int layers = spec_->layers;
  st.expert_blocks.assign(static_cast<std::size_t>(layers), 0);
  for (int l = 0; l < layers; ++l) {
    st.expert_blocks[static_cast<std::size_t>(l)] =
        static_cast<int>(std::llround(per_task * (l + 1) / layers) - std::llround(per_task * l / layers));
  }
  const int edp = spec_->tp * spec_->dp / (e.etp * e.ep);
  if (edp > 1 && e.parameter_gather.value() > 0.0) {
    st.expert_updated_gather = add_schedule(cost::CollectiveOp::kAllGather, e.parameter_gather, expert_data_groups(s));
  }
  if (edp > 1 && spec_->sharded && e.shard_gather.value() > 0.0) {
    // FSDP / ZeRO-3: each MoE block's experts gathered and reduce-scattered over their edp groups.
    st.shard.expert_gather = add_schedule(cost::CollectiveOp::kAllGather, e.shard_gather, expert_data_groups(s));
    st.shard.expert_reduce_scatter =
        add_schedule(cost::CollectiveOp::kReduceScatter, e.shard_reduce_scatter, expert_data_groups(s));
  }
}

// The one simulated rank of a stage starts each call for every group of the stage at once.
void StepRun::build_expert(int k) {
  const ExpertParallelComm& e = *spec_->expert_parallel;
  Rank& rk = rank(k);
  const std::vector<std::vector<int>> ep_groups = expert_groups(rk.stage, false);
  const std::vector<std::vector<int>> etp_groups = expert_groups(rk.stage, true);
  for (const ExpertCall& c : e.forward)
    rk.expert_forward.push_back(add_schedule(c.op, c.size, c.expert_tp ? etp_groups : ep_groups));
  for (const ExpertCall& c : e.backward)
    rk.expert_backward.push_back(add_schedule(c.op, c.size, c.expert_tp ? etp_groups : ep_groups));
}

bool StepRun::expert_due(const Rank& rk, const PipelineOp& op) const {
  if (!spec_->expert_parallel || rk.slice != 0 || rk.expert_started || op.kind == PipelineOp::Kind::kWeightGrad)
    return false;
  const Stage& st = stages_[static_cast<std::size_t>(rk.stage)];
  // A backward pass meets the layers in reverse order.
  const int layer = op.kind == PipelineOp::Kind::kForward ? rk.layer : layers_of(op) - 1 - rk.layer;
  const bool blocks = st.expert_blocks[static_cast<std::size_t>(layer)] > 0;
  return blocks && !(op.kind == PipelineOp::Kind::kForward ? rk.expert_forward : rk.expert_backward).empty();
}

void StepRun::start_expert(int k) {
  Rank& rk = rank(k);
  const PipelineOp& op = op_of(rk);
  const Stage& st = stage_of(rk);
  const auto& chain = op.kind == PipelineOp::Kind::kForward ? rk.expert_forward : rk.expert_backward;
  const int layer = op.kind == PipelineOp::Kind::kForward ? rk.layer : layers_of(op) - 1 - rk.layer;
  rk.expert_started = true;
  rk.expert_running = true;
  rk.expert_op = 0;
  rk.expert_calls = chain.size() * static_cast<std::size_t>(st.expert_blocks[static_cast<std::size_t>(layer)]);
  rk.expert_start = engine_.now();
  runner_.start(schedules_[chain.front()], tag(Kind::kExpertDone, k, 0));
}

void StepRun::expert_done(int k, des::Tick now) {
  Rank& rk = rank(k);
  const auto& chain = op_of(rk).kind == PipelineOp::Kind::kForward ? rk.expert_forward : rk.expert_backward;
  if (++rk.expert_op < rk.expert_calls) {
    runner_.start(schedules_[chain[rk.expert_op % chain.size()]], tag(Kind::kExpertDone, k, 0));
    return;
  }
  rk.expert_running = false;
  if (trace_) span(tensor_track(k), rk.expert_start, now, "MoE dispatch/combine");
  if (rk.expert_blocking) {
    rk.expert_blocking = false;
    rk.expert += now - rk.expert_start;
    start_slice(k);
  } else if (rk.expert_waiting) {
    rk.expert_waiting = false;
    rk.expert += now - rk.expert_wait_start;
    slice_end(k);
  }
}

}  // namespace stepcast::sim::detail
