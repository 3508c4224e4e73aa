// Enumerating the search space in a fixed nested order, so candidate ids are stable.
#include "stepcast/planner/candidates.hpp"

#include <algorithm>
#include <numeric>

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

/// How pp stages hold the layers: evenly, with the embedding and loss counted as layers (Llama 3's
/// 126 + 2 = 128 layers), or with a shorter first and last stage around ceil(layers / pp) each
/// (Megatron-Core's --decoder-first/last-pipeline-num-layers). `stage_layers` is what every vp
/// must divide (each stage's layers go into vp chunks alike); 0 when nothing interleaves.
struct PipelineSplit {
  bool embedding_loss_layers = false;
  int first = 0;  ///< 0: as the others
  int last = 0;
  int stage_layers = 0;
};

PipelineSplit pipeline_split(int layers, int pp) {
  if (layers <= 0 || pp == 1) return {};
  if (layers % pp == 0) return {false, 0, 0, layers / pp};
  if ((layers + 2) % pp == 0) return {true, 0, 0, (layers + 2) / pp};
  if (pp == 2) return {false, (layers + 1) / 2, layers / 2, std::gcd((layers + 1) / 2, layers / 2)};
  // The middle stages take ceil(layers / pp); the first and last share the rest, the first the
  // larger half (the last also runs the output layer and loss). No split with a first or last
  // stage between 1 and the middle's count: left even, for the layer rule to refuse.
  const int middle = (layers + pp - 1) / pp;
  const int rest = layers - middle * (pp - 2);
  if (rest < 2 || rest > 2 * middle) return {};
  const int last = rest / 2;
  const int first = rest - last;
  return {false, first, last, std::gcd(std::gcd(first, last), middle)};
}

struct ScheduleChoice {
  Schedule schedule;
  int vp;
};

std::vector<ScheduleChoice> schedules(int pp, int stage_layers) {
  if (pp == 1) return {{Schedule::k1F1B, 1}};
  std::vector<ScheduleChoice> out = {{Schedule::kGpipe, 1}, {Schedule::k1F1B, 1}, {Schedule::kZbH1, 1}};
  if (stage_layers > 0) {
    for (const int vp : divisors(stage_layers)) {
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

struct TensorChoice {
  bool sp;
  bool tp_overlap;
};

struct RecomputeChoice {
  Recompute recompute;
  unsigned modules = plan::kRecomputeCoreAttn;
  bool named = false;  ///< printed as recompute-modules=
};

/// None, Korthikanti's selective (the attention core) and full recompute; under latent attention
/// also the up projections alone (recompute-modules=mla_up_proj), what Megatron-Bridge's
/// DeepSeek-V3 and Kimi-K2 presets recompute.
std::vector<RecomputeChoice> recompute_choices(const workload::Workload& workload) {
  std::vector<RecomputeChoice> out{{Recompute::kNone}, {Recompute::kSelective}, {Recompute::kFull}};
  if (workload.shape && workload.shape->mla) out.push_back({Recompute::kSelective, plan::kRecomputeMlaUpProj, true});
  return out;
}

/// Sequence parallel off and on when tp > 1; with it on, the tensor-parallel communication also
/// overlapped with the GEMMs beside it (Megatron-Core's --tp-comm-overlap, which needs sp).
std::vector<TensorChoice> tensor_choices(int tp) {
  if (tp == 1) return {{false, false}};
  return {{false, false}, {true, false}, {true, true}};
}

/// Both rank orders where they can differ: with a pipeline, other replicas of it (data or context
/// parallel) and tensor groups smaller than a node, Megatron-Core's default puts the stages
/// outermost (a stage's replicas on nearby GPUs), the other numbers a replica's stages first (its
/// pipeline on nearby GPUs). A tensor group filling its node leaves every other group one rank per
/// node, on the same NIC, in either order.
std::vector<plan::RankOrder> rank_orders(int tp, int pp, int replicas, int gpus_per_node) {
  if (pp == 1 || replicas == 1 || tp >= gpus_per_node) return {plan::RankOrder::kStagesOutermost};
  return {plan::RankOrder::kStagesOutermost, plan::RankOrder::kStagesInsideReplicas};
}

/// Whether a candidate is also tried with Megatron-Core's flex dispatcher (DeepEP, HybridEP): its
/// experts whole (etp = 1, as every published flex recipe of the corpus runs them) on ep ranks
/// that outgrow a scale-up domain, so tokens cross between domains, where flex sends each once a
/// domain. Inside one domain flex prices as the all-to-all. A base plan that names its dispatcher
/// keeps it.
bool flex_applies(const SearchSpace& space, int ep, int etp) {
  return ep > space.gpus_per_node && etp == 1 && space.base.moe_dispatcher == plan::MoeDispatcher::kAllToAll;
}

/// Emits `p`, then the same plan with the flex dispatcher where it applies (then back to the
/// all-to-all, which flex_applies requires of the base), without copying the plan.
template <typename Emit>
void emit_dispatchers(Plan& p, bool flex, const Emit& emit) {
  emit(p);
  if (!flex) return;
  p.moe_dispatcher = plan::MoeDispatcher::kFlex;
  emit(p);
  p.moe_dispatcher = plan::MoeDispatcher::kAllToAll;
}

/// Calls `emit` with every candidate of the space, unresolved, in candidate-id order.
template <typename Emit>
void visit_candidates(const SearchSpace& space, const workload::Workload& workload, const Emit& emit) {
  STEPCAST_ASSERT(space.gpus >= 1 && space.global_batch >= 1 && space.gpus_per_node >= 1,
                  "a search space needs GPUs and a batch");
  const int layers = workload.shape ? workload.shape->layers : 0;
  const std::vector<RecomputeChoice> recomputes = recompute_choices(workload);
  for (const int tp : divisors(space.gpus)) {
    for (const auto [cp, cp_comm] : context_choices(space.gpus / tp, space.max_cp)) {
      for (const int pp : divisors(space.gpus / (tp * cp))) {
        const int dp = space.gpus / (tp * cp * pp);
        const PipelineSplit split = pipeline_split(layers, pp);
        const int mbs_bound = std::min(space.max_micro_batch, std::max(1, space.global_batch / dp));
        const std::vector<ExpertChoice> experts = expert_layouts(workload, tp, dp * cp);
        for (const auto [schedule, vp] : schedules(pp, split.stage_layers)) {
          // Context-parallel ranks hold the same weights: the state shards over dp x cp.
          for (const auto [sharding, group] : shardings(dp * cp, tp * pp * cp, space.gpus_per_node)) {
            if (cp > 1 && sharding == Sharding::kFsdpHybrid) continue;  // a plan rule refuses it
            for (int mbs = 1; mbs <= mbs_bound; mbs *= 2) {
              for (const RecomputeChoice& recompute : recomputes) {
                for (const auto [sp, tp_overlap] : tensor_choices(tp)) {
                  for (const auto [ep, etp] : experts) {
                    for (const plan::RankOrder order : rank_orders(tp, pp, dp * cp, space.gpus_per_node)) {
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
                      p.recompute = recompute.recompute;
                      p.recompute_modules = recompute.modules;
                      p.recompute_modules_given = recompute.named;
                      p.sequence_parallel = sp;
                      p.tp_overlap = tp_overlap;
                      p.cp = cp;
                      p.cp_comm = cp_comm;
                      p.pp_embedding_loss_layers = split.embedding_loss_layers;
                      p.pp_first_layers = split.first;
                      p.pp_last_layers = split.last;
                      p.rank_order = order;
                      p.global_batch = space.global_batch;
                      p.seq_len = space.seq_len;
                      const bool flex = flex_applies(space, ep, etp == 0 ? tp : etp);
                      emit_dispatchers(p, flex, emit);
                      // A sharded optimizer can gather its updated parameters beside the next forward
                      // (overlap-param-gather=on), unless the base plan has settled the overlap.
                      if ((sharding == Sharding::kZero1 || sharding == Sharding::kZero2) &&
                          !space.base.overlap_param_gather && space.base.overlap_grad_reduce.value_or(true)) {
                        p.overlap_param_gather = true;
                        emit_dispatchers(p, flex, emit);
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
  }
}

}  // namespace

std::vector<Plan> enumerate_candidates(const SearchSpace& space, const workload::Workload& workload) {
  std::vector<Plan> out;
  visit_candidates(space, workload, [&](const Plan& p) { out.push_back(plan::resolve(p, workload, space.gpus)); });
  return out;
}

std::size_t count_candidates(const SearchSpace& space, const workload::Workload& workload) {
  std::size_t n = 0;
  visit_candidates(space, workload, [&n](const Plan&) { ++n; });
  return n;
}

}  // namespace stepcast::planner
