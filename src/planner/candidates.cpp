// Enumerating the search space in a fixed nested order, so candidate ids are stable.
#include "stepcast/planner/candidates.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"

namespace stepcast::planner {
namespace {

using plan::Plan;
using plan::Recompute;
using plan::Schedule;
using plan::Sharding;

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

struct ScheduleChoice {
  Schedule schedule;
  int vp;
};

std::vector<ScheduleChoice> schedules(int pp, int layers) {
  if (pp == 1) return {{Schedule::k1F1B, 1}};
  std::vector<ScheduleChoice> out = {{Schedule::kGpipe, 1}, {Schedule::k1F1B, 1}, {Schedule::kZbH1, 1}};
  if (layers > 0 && layers % pp == 0) {
    for (const int vp : divisors(layers / pp)) {
      if (vp >= 2) out.push_back({Schedule::kInterleaved, vp});
    }
  }
  return out;
}

struct ShardingChoice {
  Sharding sharding;
  int shard_group;
};

std::vector<ShardingChoice> shardings(int dp, int model_parallel, int gpus_per_node) {
  if (dp == 1) return {{Sharding::kDdp, 1}};
  std::vector<ShardingChoice> out = {{Sharding::kDdp, dp},   {Sharding::kZero1, dp},    {Sharding::kZero2, dp},
                                     {Sharding::kZero3, dp}, {Sharding::kFsdpFull, dp}, {Sharding::kFsdpGradOp, dp}};
  if (gpus_per_node % model_parallel == 0) {
    const int group = gpus_per_node / model_parallel;
    if (group >= 2 && group < dp && dp % group == 0) out.push_back({Sharding::kFsdpHybrid, group});
  }
  return out;
}

struct ContextChoice {
  int cp;
  plan::ContextComm comm;
};

std::vector<ContextChoice> context_choices(int gpus_over_tp, int max_cp) {
  std::vector<ContextChoice> out = {{1, plan::ContextComm::kP2p}};
  for (int cp = 2; cp <= max_cp && gpus_over_tp % cp == 0; cp *= 2) {
    out.push_back({cp, plan::ContextComm::kP2p});
    out.push_back({cp, plan::ContextComm::kA2a});
  }
  return out;
}

struct ExpertChoice {
  int ep;
  int etp;  // 0: as tp
};

/// Expert layouts of an MoE workload: every ep that divides the routed experts and folds into
/// the stage's tp x cp x dp GPUs (`replicas` = cp x dp), with experts split as the dense layers (etp = tp) or whole
/// (etp = 1, Megatron-core's usual choice with ep > 1). A dense workload has the one layout ep = 1.
std::vector<ExpertChoice> expert_layouts(const workload::Workload& workload, int tp, int replicas) {
  if (!workload.shape || !workload.shape->moe) return {{1, 0}};
  std::vector<ExpertChoice> out;
  for (const int ep : divisors(workload.shape->moe->experts)) {
    for (const int etp : {tp, 1}) {
      if (etp == 1 && tp > 1 && ep == 1) continue;  // etp differs from tp only with expert parallel
      if ((tp * replicas) % (etp * ep) != 0) continue;
      out.push_back({ep, etp == tp ? 0 : etp});
      if (tp == 1) break;
    }
  }
  return out;
}

}  // namespace

std::vector<Plan> enumerate_candidates(const SearchSpace& space, const workload::Workload& workload) {
  STEPCAST_ASSERT(space.gpus >= 1 && space.global_batch >= 1 && space.gpus_per_node >= 1,
                  "a search space needs GPUs and a batch");
  const int layers = workload.shape ? workload.shape->layers : 0;
  std::vector<Plan> out;
  for (const int tp : divisors(space.gpus)) {
    for (const auto [cp, cp_comm] : context_choices(space.gpus / tp, space.max_cp)) {
      for (const int pp : divisors(space.gpus / (tp * cp))) {
        const int dp = space.gpus / (tp * cp * pp);
        // Layers that do not divide pp but do with the embedding and loss as layers (Llama 3).
        const bool embedding_loss_layers = layers > 0 && layers % pp != 0 && (layers + 2) % pp == 0;
        const int mbs_bound = std::min(space.max_micro_batch, std::max(1, space.global_batch / dp));
        const std::vector<ExpertChoice> experts = expert_layouts(workload, tp, dp * cp);
        for (const auto [schedule, vp] : schedules(pp, layers)) {
          // Context-parallel ranks hold the same weights: the state shards over dp x cp.
          for (const auto [sharding, group] : shardings(dp * cp, tp * pp * cp, space.gpus_per_node)) {
            if (cp > 1 && sharding == Sharding::kFsdpHybrid) continue;  // a plan rule refuses it
            for (int mbs = 1; mbs <= mbs_bound; mbs *= 2) {
              for (const Recompute recompute : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
                for (const bool sp : {false, true}) {
                  if (sp && tp == 1) continue;
                  for (const auto [ep, etp] : experts) {
                    Plan p = space.base;
                    p.ep = ep;
                    p.etp = etp;
                    p.dp = dp;
                    p.tp = tp;
                    p.pp = pp;
                    p.vp = vp;
                    p.schedule = schedule;
                    p.sharding = sharding;
                    p.shard_group = sharding == Sharding::kFsdpHybrid ? group : dp;
                    p.micro_batch_size = mbs;
                    p.recompute = recompute;
                    p.sequence_parallel = sp;
                    p.cp = cp;
                    p.cp_comm = cp_comm;
                    p.pp_embedding_loss_layers = embedding_loss_layers;
                    p.global_batch = space.global_batch;
                    p.seq_len = space.seq_len;
                    out.push_back(plan::resolve(p, workload, space.gpus));
                    // A sharded optimizer can gather its updated parameters beside the next forward
                    // (overlap-param-gather=on), unless the base plan has settled the overlap.
                    if ((sharding == Sharding::kZero1 || sharding == Sharding::kZero2) &&
                        !space.base.overlap_param_gather && space.base.overlap_grad_reduce.value_or(true)) {
                      p.overlap_param_gather = true;
                      out.push_back(plan::resolve(p, workload, space.gpus));
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

}  // namespace stepcast::planner
