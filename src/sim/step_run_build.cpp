// Building a step's graph: each simulated rank and its slowdown, the send patterns between
// stages, and the collective schedules of gradient buckets, FSDP layers and tensor parallelism.
#include "step_run.hpp"

#include "stepcast/core/errors.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>

namespace stepcast::sim::detail {

double standard_normal(std::mt19937_64& rng) {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  const double u1 = (static_cast<double>(rng() >> 11) + 0.5) * kTwoToMinus53;
  const double u2 = (static_cast<double>(rng() >> 11) + 0.5) * kTwoToMinus53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

StepRun::StepRun(const topology::Topology& topo, const StepSpec& spec, const Perturbation& pert, bool trace)
    : topo_(&topo),
      spec_(&spec),
      rng_(pert.seed),
      timers_(engine_, *this),
      runner_(*this),
      network_(topo, engine_, *this),
      trace_(trace),
      noise_cv_(pert.noise_cv),
      replicas_(pert.step_cv > 0.0 ? spec.dp : 1) {
  if (spec.context_parallel && pert.step_cv > 0.0) {
    throw InputError("--straggler", {},
                     "step-cv=: per-GPU step noise is not simulated with context parallel (cp > 1): each simulated "
                     "rank stands for its cp peers");
  }
  if (spec.expert_parallel && pert.step_cv > 0.0) {
    throw InputError("--straggler", {},
                     "step-cv=: per-GPU step noise is not simulated with expert parallel (MoE plans): each simulated "
                     "rank stands for its expert-parallel peers");
  }
  runner_.attach(network_);
  engine_.add_model(timers_);
  engine_.add_model(network_);
  place_ranks(pert);
  build();
}

void StepRun::place_ranks(const Perturbation& pert) {
  ranks_.resize(static_cast<std::size_t>(rank_count()));
  for (int k = 0; k < rank_count(); ++k) {
    rank(k).stage = k % spec_->pp;
    rank(k).replica = k / spec_->pp;
    rank(k).factor = 0.0;
  }
  for (int r = 0; r < spec_->dp; ++r) {
    for (int s = 0; s < spec_->pp; ++s) {
      Rank& rk = rank(rank_index(r % replicas_, s));
      for (int i = 0; i < spec_->tp; ++i) {
        const int g = gpu(r, s, i);
        const bool slow = g < topo_->gpu_count() && ((pert.slow_gpu && *pert.slow_gpu == g) ||
                                                     (pert.slow_node && *pert.slow_node == topo_->node_of_gpu(g)));
        double f = slow ? pert.slowdown : 1.0;
        if (pert.step_cv > 0.0) f *= std::max(kMinFactor, 1.0 + pert.step_cv * standard_normal(rng_));
        rk.factor = std::max(rk.factor, f);
      }
    }
  }
}

// Each collective is priced by the cost model for one group alone (NCCL's pick, calibration
// applied); the groups beside it and everything else on the links are the simulation's to share.
std::uint32_t StepRun::add_schedule(cost::CollectiveOp op, Bytes size, std::span<const std::vector<int>> groups) {
  const std::vector<int>& first = groups.front();
  const int ranks = static_cast<int>(first.size());
  const int stride = ranks > 1 ? first[1] - first[0] : 1;
  const cost::CollectiveGroup group = cost::collective_group(*topo_, topo_->tiers(ranks, stride));
  const cost::CollectivePrice price = cost::price_collective(group, op, size, spec_->model);
  schedules_.push_back(build_collective(network_, *topo_, op, size, price, groups));
  return static_cast<std::uint32_t>(schedules_.size() - 1);
}

void StepRun::build() {
  const int pp = spec_->pp;
  const std::size_t cells = static_cast<std::size_t>(replicas_) * static_cast<std::size_t>(virtual_stages()) *
                            static_cast<std::size_t>(spec_->micro_batches);
  fwd_ready_.assign(cells, 0);
  bwd_ready_.assign(cells, 0);
  fwd_send_.assign(cells, -1);
  bwd_send_.assign(cells, -1);
  for (int r = 0; r < replicas_; ++r) {
    // Virtual stage 0 reads its input.
    for (int mb = 0; mb < spec_->micro_batches; ++mb) fwd_ready_[ready_index(r, 0, mb)] = 1;
  }
  stages_.resize(static_cast<std::size_t>(pp));
  for (int s = 0; s < pp; ++s) {
    Stage& st = stages_[static_cast<std::size_t>(s)];
    st.ops = pipeline_order(spec_->schedule, pp, s, spec_->micro_batches, spec_->vp);
    // Weight gradients come from the backward, or from its weight-gradient half under ZB-H1.
    const bool split = std::any_of(st.ops.begin(), st.ops.end(),
                                   [](const PipelineOp& op) { return op.kind == PipelineOp::Kind::kWeightGrad; });
    const PipelineOp::Kind grad_kind = split ? PipelineOp::Kind::kWeightGrad : PipelineOp::Kind::kBackward;
    for (std::size_t i = 0; i < st.ops.size(); ++i) {
      if (st.ops[i].kind == grad_kind) st.grad_ops.push_back(i);
    }
    build_buckets(s);
    if (spec_->sharded) build_shards(s);
    if (spec_->dp > 1 && spec_->parameter_gather.value() > 0.0) {
      if (spec_->parameter_gather_before_forward) {
        build_forward_gathers(s);
      } else {
        st.updated_gather =
            add_schedule(cost::CollectiveOp::kAllGather, spec_->parameter_gather, data_parallel_groups(s));
      }
    }
    if (spec_->expert_parallel) build_expert_stage(s);
  }
  for (int k = 0; k < rank_count(); ++k) {
    // Sends of each rank's tensor-parallel group to the next and previous stage, together.
    Rank& rk = rank(k);
    std::vector<std::pair<int, int>> next;
    std::vector<std::pair<int, int>> prev;
    std::vector<std::vector<int>> group(1);
    for (int i = 0; i < spec_->tp; ++i) {
      const int me = gpu(rk.replica, rk.stage, i);
      next.emplace_back(me, gpu(rk.replica, (rk.stage + 1) % pp, i));
      prev.emplace_back(me, gpu(rk.replica, (rk.stage + pp - 1) % pp, i));
      group.front().push_back(me);
    }
    to_next_.push_back(network_.pattern(next));
    to_prev_.push_back(network_.pattern(prev));
    if (spec_->tensor_parallel) {
      for (const cost::CollectiveOp op : spec_->tensor_parallel->ops) {
        rk.tensor_schedules.push_back(add_schedule(op, spec_->tensor_parallel->size, group));
      }
    }
    if (spec_->context_parallel) build_context(k);
    if (spec_->expert_parallel) build_expert(k);
  }
  tracks_.clear();
  std::vector<std::string> tensor_tracks;
  for (int k = 0; k < rank_count(); ++k) {
    const Rank& rk = rank(k);
    const int g = gpu(rk.replica, rk.stage, 0);
    const std::string who = replicas_ == 1 ? fmt::format("GPU {} (stage {})", g, rk.stage)
                                           : fmt::format("GPU {} (stage {}, replica {})", g, rk.stage, rk.replica);
    tracks_.push_back(who + " compute");
    if (comm_tracks()) {
      std::string kinds = spec_->tensor_parallel ? "tensor" : "";
      if (spec_->context_parallel) kinds += kinds.empty() ? "context" : "/context";
      if (spec_->expert_parallel) kinds += kinds.empty() ? "expert" : "/expert";
      tensor_tracks.push_back(fmt::format("{} {}-parallel comm", who, kinds));
    }
  }
  tracks_.insert(tracks_.end(), tensor_tracks.begin(), tensor_tracks.end());
  for (int s = 0; s < pp; ++s) tracks_.push_back(fmt::format("GPU {} (stage {}) data-parallel comm", gpu(0, s, 0), s));
  for (const auto tier : {topology::LinkTier::kIntraNode, topology::LinkTier::kNic, topology::LinkTier::kFabric}) {
    tracks_.push_back(fmt::format("links: {}", topology::to_string(tier)));
  }
  for (int k = 0; k < rank_count(); ++k) {
    const Rank& rk = rank(k);
    tracks_.push_back(fmt::format("GPU {} (stage {}) pipeline sends", gpu(rk.replica, rk.stage, 0), rk.stage));
  }
}

// The cp ranks of each tensor rank are consecutive data-parallel replicas (plan.hpp); the one
// simulated rank starts the exchange of every group of its stage.
void StepRun::build_context(int k) {
  const ContextParallelComm& c = *spec_->context_parallel;
  Rank& rk = rank(k);
  std::vector<std::vector<int>> groups;
  const int block = rk.replica - rk.replica % c.cp;
  for (int i = 0; i < spec_->tp; ++i) {
    std::vector<int> g;
    for (int r = 0; r < c.cp; ++r) g.push_back(gpu(block + r, rk.stage, i));
    groups.push_back(std::move(g));
  }
  for (const auto& [op, size] : c.forward) rk.context_forward.push_back(add_schedule(op, size, groups));
  for (const auto& [op, size] : c.backward) rk.context_backward.push_back(add_schedule(op, size, groups));
}

std::vector<std::vector<int>> StepRun::data_parallel_groups(int s) const {
  std::vector<std::vector<int>> groups;
  for (int i = 0; i < spec_->tp; ++i) {
    std::vector<int> g;
    for (int r = 0; r < spec_->dp; ++r) g.push_back(gpu(r, s, i));
    groups.push_back(std::move(g));
  }
  return groups;
}

void StepRun::build_buckets(int s) {
  Stage& st = stages_[static_cast<std::size_t>(s)];
  if (spec_->dp <= 1) return;
  const std::vector<std::vector<int>> groups = data_parallel_groups(s);
  // An MoE plan's expert gradients reduce over the expert data-parallel groups instead.
  const std::vector<std::vector<int>> expert_groups = spec_->expert_parallel ? expert_data_groups(s) : groups;
  // Each task's buckets become ready as their bytes are, in proportion to the task's progress:
  // per task, the bytes of every sync that reduces there, in sync order.
  const auto add = [&](const std::vector<std::pair<const GradientSync*, double>>& syncs, std::size_t op) {
    double total = 0.0;
    for (const auto& [sync, count] : syncs) total += sync->bucket.value() * count;
    double cumulative = 0.0;
    // Not overlapped (overlap-grad-reduce=off): every bucket is ready when the task ends.
    const auto push = [&](std::uint32_t schedule, Bytes size, bool overlapped) {
      cumulative += size.value();
      st.buckets.push_back(Bucket{schedule, op, total > 0.0 && overlapped ? std::min(1.0, cumulative / total) : 1.0});
    };
    for (const auto& [sync, count] : syncs) {
      const double whole = std::floor(count);
      const double rest = count - whole;
      const auto& over = sync->expert_data ? expert_groups : groups;
      if (whole > 0.0) {
        // Full buckets share one schedule.
        const std::uint32_t full = add_schedule(sync->op, sync->bucket, over);
        for (double j = 0; j < whole; j += 1.0) push(full, sync->bucket, sync->overlapped);
      }
      if (rest > 1e-9) push(add_schedule(sync->op, sync->bucket * rest, over), sync->bucket * rest, sync->overlapped);
    }
  };
  const double tasks = static_cast<double>(st.grad_ops.size());
  // Megatron-LM wraps each model chunk in its own DDP (megatron/training/training.py, get_model)
  // and enables a chunk's gradient sync for its last micro-batch (pipeline_parallel/schedules.py,
  // interleaved schedule), so a once-per-step sync's buckets of chunk c fill during chunk c's last
  // backward, which the cooldown runs before the lower chunks': that task holds 1/v of them. Not
  // overlapped (finalize_model_grads), all wait for the step's last gradient task.
  std::vector<std::size_t> chunk_last(static_cast<std::size_t>(spec_->vp), st.grad_ops.back());
  for (const std::size_t op : st.grad_ops) chunk_last[static_cast<std::size_t>(st.ops[op].chunk)] = op;
  const double chunks = static_cast<double>(spec_->vp);
  for (const std::size_t op : st.grad_ops) {
    const bool last = op == st.grad_ops.back();
    const bool chunk_ends = op == chunk_last[static_cast<std::size_t>(st.ops[op].chunk)];
    std::vector<std::pair<const GradientSync*, double>> here;
    for (const GradientSync& sync : spec_->syncs) {
      if (sync.every_micro_batch) {
        here.emplace_back(&sync, sync.buckets / tasks);
      } else if (sync.overlapped && chunk_ends) {
        here.emplace_back(&sync, sync.buckets / chunks);
      } else if (!sync.overlapped && last) {
        here.emplace_back(&sync, sync.buckets);
      }
    }
    add(here, op);
  }
}

void StepRun::build_forward_gathers(int s) {
  Stage& st = stages_[static_cast<std::size_t>(s)];
  const std::vector<std::vector<int>> groups = data_parallel_groups(s);
  const Bytes total = spec_->parameter_gather;
  const Bytes bucket =
      spec_->parameter_gather_bucket.value() > 0.0 ? std::min(spec_->parameter_gather_bucket, total) : total;
  const double pieces = total / bucket;
  const double whole = std::floor(pieces);
  // Full buckets share one schedule; a partial last one has its own.
  const std::uint32_t full = add_schedule(cost::CollectiveOp::kAllGather, bucket, groups);
  for (double j = 0; j < whole; j += 1.0) st.forward_gathers.push_back(full);
  if (pieces - whole > 1e-9)
    st.forward_gathers.push_back(add_schedule(cost::CollectiveOp::kAllGather, bucket * (pieces - whole), groups));
}

void StepRun::build_shards(int s) {
  const ShardedLayers& sh = *spec_->sharded;
  Stage& st = stages_[static_cast<std::size_t>(s)];
  const int shard = std::clamp(sh.shard_ranks, 1, spec_->dp);
  const int replica_groups = spec_->dp / shard;
  std::vector<std::vector<int>> shards;
  std::vector<std::vector<int>> replicas;
  for (int i = 0; i < spec_->tp; ++i) {
    for (int h = 0; h < replica_groups; ++h) {
      std::vector<int> g;
      for (int q = 0; q < shard; ++q) g.push_back(gpu(h * shard + q, s, i));
      shards.push_back(std::move(g));
    }
    for (int q = 0; q < shard; ++q) {
      std::vector<int> g;
      for (int h = 0; h < replica_groups; ++h) g.push_back(gpu(h * shard + q, s, i));
      replicas.push_back(std::move(g));
    }
  }
  const auto both = [&](cost::CollectiveOp op, Bytes layer, Bytes root, std::span<const std::vector<int>> groups) {
    const std::uint32_t one = add_schedule(op, layer, groups);
    return std::array<std::uint32_t, 2>{one, root.value() > 0.0 ? add_schedule(op, layer + root, groups) : one};
  };
  st.shard.gather = both(cost::CollectiveOp::kAllGather, sh.gather, sh.root_gather, shards);
  st.shard.reduce_scatter = both(cost::CollectiveOp::kReduceScatter, sh.reduce_scatter, sh.root_reduce_scatter, shards);
  if (sh.replica_all_reduce.value() > 0.0) {
    st.shard.replica_all_reduce =
        both(cost::CollectiveOp::kAllReduce, sh.replica_all_reduce, sh.root_replica_all_reduce, replicas);
  }
}

}  // namespace stepcast::sim::detail
