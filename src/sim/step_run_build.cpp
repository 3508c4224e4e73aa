// Building a step's simulation from its graph: each simulated rank and its slowdown, each stage's
// task order and layer programs (its calls by lane, as their anchors place them), its buckets, the
// groups each call runs on and the send patterns between stages.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <utility>

#include "step_run.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::sim::detail {

namespace {

using graph::Anchor;
using graph::Pass;

bool inside_layers(Anchor a) {
  return a == Anchor::kAfterSlice || a == Anchor::kBesideSlice || a == Anchor::kLayerStart ||
         a == Anchor::kLayerPrefetch || a == Anchor::kLayerEnd;
}

// Whether a layer-start or prefetch node runs in the forward (pass 0) or the backward (pass 1);
// in the backward the recomputed forward's calls come first.
bool runs_in(const graph::CommNode& node, int pass, bool recompute_round) {
  if (pass == 0) return node.pass != Pass::kBackward;
  return recompute_round ? node.pass == Pass::kForwardAndRecompute : node.pass == Pass::kBackward;
}

std::size_t find_root(std::vector<int>& parent, std::size_t i) {
  while (parent[i] != static_cast<int>(i))
    i = static_cast<std::size_t>(parent[i] = parent[static_cast<std::size_t>(parent[i])]);
  return i;
}

}  // namespace

double standard_normal(std::mt19937_64& rng) {
  constexpr double kTwoToMinus53 = 1.0 / 9007199254740992.0;
  const double u1 = (static_cast<double>(rng() >> 11) + 0.5) * kTwoToMinus53;
  const double u2 = (static_cast<double>(rng() >> 11) + 0.5) * kTwoToMinus53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

StepRun::StepRun(const topology::Topology& topo, const graph::StepGraph& graph, const SimOptions& options,
                 const Perturbation& pert, bool trace)
    : topo_(&topo),
      graph_(&graph),
      options_(&options),
      rng_(pert.seed),
      timers_(engine_, *this),
      runner_(*this),
      network_(topo, engine_, *this),
      trace_(trace),
      noise_cv_(pert.noise_cv),
      replicas_(pert.step_cv > 0.0 ? graph.layout.replicas : 1),
      sm_count_(topo.gpu().sm_count) {
  runner_.attach(network_);
  engine_.add_model(timers_);
  engine_.add_model(network_);
  for (const graph::CommNode& node : graph.comm) has_layer_calls_ = has_layer_calls_ || inside_layers(node.anchor);
  place_ranks(pert);
  build();
}

void StepRun::place_ranks(const Perturbation& pert) {
  const graph::Layout& layout = graph_->layout;
  ranks_.resize(static_cast<std::size_t>(rank_count()));
  for (int k = 0; k < rank_count(); ++k) {
    rank(k).stage = k % pp();
    rank(k).replica = k / pp();
    rank(k).factor = 0.0;
    rank(k).waits.assign(graph_->comm.size(), 0);
  }
  for (int r = 0; r < layout.replicas; ++r) {
    for (int s = 0; s < pp(); ++s) {
      Rank& rk = rank(rank_index(r % replicas_, s));
      for (int i = 0; i < layout.tp; ++i) {
        const int g = layout.gpu(r, s, i);
        const bool slow = g < topo_->gpu_count() && ((pert.slow_gpu && *pert.slow_gpu == g) ||
                                                     (pert.slow_node && *pert.slow_node == topo_->node_of_gpu(g)));
        double f = slow ? pert.slowdown : 1.0;
        if (pert.step_cv > 0.0) f *= std::max(kMinFactor, 1.0 + pert.step_cv * standard_normal(rng_));
        rk.factor = std::max(rk.factor, f);
      }
    }
  }
}

// A group kind at a stage, in components: with one rank standing for every replica, the groups its
// own replica forms (or every group, when their traffic shares the NICs); with every replica
// simulated, each set of groups whose ranks are joined by a group is one rendezvous.
const GroupRun& StepRun::group_run(int s, std::size_t group) {
  Stage& st = stages_[static_cast<std::size_t>(s)];
  GroupRun& run = st.groups[group];
  if (!run.component_of_replica.empty()) return run;
  const graph::GroupSpec& spec = graph_->groups[group];
  const graph::Layout& layout = graph_->layout;
  const GroupSets groups = spec.members(s);
  std::vector<int> parent(static_cast<std::size_t>(layout.replicas));
  std::iota(parent.begin(), parent.end(), 0);
  for (const std::vector<int>& g : groups) {
    const std::size_t a = find_root(parent, static_cast<std::size_t>(layout.replica_of(g.front())));
    for (const int gpu : g)
      parent[find_root(parent, static_cast<std::size_t>(layout.replica_of(gpu)))] = static_cast<int>(a);
  }
  run.component_of_replica.assign(static_cast<std::size_t>(replicas_), -1);
  std::map<std::size_t, int> index;  // root replica -> component
  const bool one_for_all = replicas_ == 1 && spec.representation == graph::Representation::kEveryGroup;
  for (const std::vector<int>& g : groups) {
    const std::size_t root =
        one_for_all ? 0 : find_root(parent, static_cast<std::size_t>(layout.replica_of(g.front())));
    if (replicas_ == 1 && !one_for_all && root != find_root(parent, 0)) continue;
    auto [it, fresh] = index.emplace(root, static_cast<int>(run.components.size()));
    if (fresh) run.components.emplace_back();
    run.components[static_cast<std::size_t>(it->second)].push_back(g);
  }
  run.ranks_of_component.assign(run.components.size(), 0);
  for (int r = 0; r < replicas_; ++r) {
    const std::size_t root = one_for_all ? 0 : find_root(parent, static_cast<std::size_t>(r));
    const auto it = index.find(root);
    if (it == index.end()) continue;
    run.component_of_replica[static_cast<std::size_t>(r)] = it->second;
    ++run.ranks_of_component[static_cast<std::size_t>(it->second)];
  }
  return run;
}

std::uint32_t StepRun::add_slot(int s, std::size_t node, Bytes size) {
  Stage& st = stages_[static_cast<std::size_t>(s)];
  for (std::uint32_t i = 0; i < st.slots.size(); ++i) {
    if (st.slots[i].node == node && st.slots[i].size == size) return i;
  }
  st.slots.push_back(Slot{static_cast<std::uint32_t>(node), size});
  return static_cast<std::uint32_t>(st.slots.size() - 1);
}

// A step's call: NCCL's price, and what the call costs beyond it (KernelParams::
// collective_overhead), which arrives with the model's latency, after the last byte.
cost::CollectivePrice StepRun::step_price(const cost::CollectiveGroup& group, cost::CollectiveOp op, Bytes size) const {
  cost::CollectivePrice price = cost::price_collective(group, op, size, options_->model);
  const Seconds overhead = graph_->compute.params.collective_overhead;
  price.time += overhead;
  price.latency += overhead;
  price.flows.latency += overhead;
  return price;
}

// Each collective is priced by the cost model for one group alone (NCCL's pick, calibration
// applied); the groups beside it and everything else on the links are the simulation's to share.
cost::CollectivePrice StepRun::isolated_price(const Stage& st, std::uint32_t slot) const {
  const graph::CommNode& node = node_of(st, slot);
  const graph::GroupSpec& g = graph_->groups[node.group];
  const cost::CollectiveGroup group = cost::collective_group(*topo_, topo_->tiers(g.ranks, g.stride, g.concurrency));
  return step_price(group, node.op, st.slots[slot].size);
}

int StepRun::blocks_of(int s, std::uint32_t slot) {
  Slot& sl = stages_[static_cast<std::size_t>(s)].slots[slot];
  if (sl.blocks < 0) sl.blocks = isolated_price(stages_[static_cast<std::size_t>(s)], slot).blocks;
  return sl.blocks;
}

std::uint32_t StepRun::schedule_for(int s, std::uint32_t slot, int component) {
  const auto key = std::tuple{s, slot, component};
  if (const auto it = schedule_ids_.find(key); it != schedule_ids_.end()) return it->second;
  const Stage& st = stages_[static_cast<std::size_t>(s)];
  if (!options_->contention) {
    // A delay of the call's price, on no link.
    CollectiveSchedule delay;
    delay.patterns.push_back(network_.pattern(std::span<const std::pair<int, int>>{}));
    delay.phases.push_back(CollectivePhase{0, Bytes(0.0), 1, des::to_ticks(isolated_price(st, slot).time)});
    schedules_.push_back(std::move(delay));
    const auto id = static_cast<std::uint32_t>(schedules_.size() - 1);
    schedule_ids_.emplace(key, id);
    return id;
  }
  const graph::CommNode& node = node_of(st, slot);
  const GroupRun& run = group_run(s, node.group);
  GroupSets all;
  if (component < 0) {
    for (const GroupSets& c : run.components) all.insert(all.end(), c.begin(), c.end());
  }
  const GroupSets& groups = component < 0 ? all : run.components[static_cast<std::size_t>(component)];
  const std::vector<int>& first = groups.front();
  const int ranks = static_cast<int>(first.size());
  const int stride = ranks > 1 ? first[1] - first[0] : 1;
  const cost::CollectiveGroup group = cost::collective_group(*topo_, topo_->tiers(ranks, std::max(1, stride)));
  const Bytes size = st.slots[slot].size;
  const cost::CollectivePrice price = step_price(group, node.op, size);
  schedules_.push_back(build_collective(network_, *topo_, node.op, size, price, groups));
  const auto id = static_cast<std::uint32_t>(schedules_.size() - 1);
  schedule_ids_.emplace(key, id);
  return id;
}

void StepRun::build() {
  const std::size_t cells = static_cast<std::size_t>(replicas_) * static_cast<std::size_t>(virtual_stages()) *
                            static_cast<std::size_t>(graph_->micro_batches);
  fwd_ready_.assign(cells, 0);
  bwd_ready_.assign(cells, 0);
  fwd_send_.assign(cells, -1);
  bwd_send_.assign(cells, -1);
  for (int r = 0; r < replicas_; ++r) {
    // Virtual stage 0 reads its input.
    for (int mb = 0; mb < graph_->micro_batches; ++mb) fwd_ready_[ready_index(r, 0, mb)] = 1;
  }
  stages_.resize(static_cast<std::size_t>(pp()));
  for (int s = 0; s < pp(); ++s) build_stage(s);
  for (int k = 0; k < rank_count(); ++k) resolve_schedules(k);
  build_tracks();
}

void StepRun::build_stage(int s) {
  Stage& st = stages_[static_cast<std::size_t>(s)];
  st.groups.resize(graph_->groups.size());
  st.ops = pipeline_order(graph_->schedule, pp(), s, graph_->micro_batches, graph_->vp);
  // Weight gradients come from the backward, or from its weight-gradient half under ZB-H1.
  const bool split = std::any_of(st.ops.begin(), st.ops.end(),
                                 [](const PipelineOp& op) { return op.kind == PipelineOp::Kind::kWeightGrad; });
  const PipelineOp::Kind grad_kind = split ? PipelineOp::Kind::kWeightGrad : PipelineOp::Kind::kBackward;
  for (std::size_t i = 0; i < st.ops.size(); ++i) {
    if (st.ops[i].kind == grad_kind) st.grad_ops.push_back(i);
  }
  build_layers(s);
  build_buckets(s);
  const bool replicated = graph_->layout.replicas > 1;
  for (std::size_t n = 0; n < graph_->comm.size(); ++n) {
    const graph::CommNode& node = graph_->comm[n];
    if (node.anchor == Anchor::kAfterOptimizer && replicated) {
      st.after_optimizer.push_back(add_slot(s, n, node.size));
    } else if (node.anchor == Anchor::kStepStart && replicated) {
      // Each model chunk's even share, in buckets of `size`, a smaller last one.
      st.step_start.resize(static_cast<std::size_t>(graph_->vp));
      const double pieces = node.pieces / graph_->vp;
      const double whole = std::floor(pieces);
      for (auto& chunk : st.step_start) {
        for (double j = 0; j < whole; j += 1.0) chunk.push_back(add_slot(s, n, node.size));
        if (pieces - whole > 1e-9) chunk.push_back(add_slot(s, n, node.size * (pieces - whole)));
      }
    } else if (node.anchor == Anchor::kStageSend) {
      st.send_slot = add_slot(s, n, node.size);
      st.has_send = true;
      st.blocking_send = node.blocking;
    }
  }
}

// Each layer pass's program: the layer-start calls by lane, the gathers issued for it and the
// reductions after its backward. A layer's calls run round by round (an MoE block's dispatch,
// expert-TP calls and combine, once per block), each round its nodes in order, each node its
// consecutive calls (a ring's steps).
void StepRun::build_layers(int s) {
  Stage& st = stages_[static_cast<std::size_t>(s)];
  const graph::StageWork& work = graph_->stages[static_cast<std::size_t>(s)];
  const auto rounds = [&](std::vector<std::uint32_t>& out, Anchor anchor, int pass, int chunk, int layer, bool root,
                          std::optional<graph::Join> join) {
    for (const bool recompute_round : {true, false}) {
      if (pass == 0 && recompute_round) continue;
      // The root parameters ride with the first layer even where the first chunk holds none.
      const auto rounds_of = [&](const graph::CommNode& n) {
        const int r = graph_->rounds_at(n, s, chunk, layer);
        return root && n.root.value() > 0.0 ? std::max(r, 1) : r;
      };
      int most = 0;
      for (const graph::CommNode& n : graph_->comm) {
        if (n.anchor == anchor && (anchor == Anchor::kLayerEnd || runs_in(n, pass, recompute_round)) &&
            (!join || n.join == *join))
          most = std::max(most, rounds_of(n));
      }
      for (int round = 0; round < most; ++round) {
        for (std::size_t i = 0; i < graph_->comm.size(); ++i) {
          const graph::CommNode& n = graph_->comm[i];
          if (n.anchor != anchor || (join && n.join != *join) || round >= rounds_of(n)) continue;
          if (anchor != Anchor::kLayerEnd && !runs_in(n, pass, recompute_round)) continue;
          const Bytes size = root && round == 0 ? n.size + n.root : n.size;
          for (int c = 0; c < n.layer_calls; ++c) out.push_back(add_slot(s, i, size));
        }
      }
      if (anchor == Anchor::kLayerEnd) break;
    }
  };
  const auto program = [&](int pass, int chunk, int layer, bool root) {
    LayerProgram p;
    const graph::Join joins[] = {graph::Join::kBeforeCompute, graph::Join::kFirstSlice, graph::Join::kLayerEnd};
    for (std::size_t lane = 0; lane < 3; ++lane)
      rounds(p.lanes[lane], Anchor::kLayerStart, pass, chunk, layer, root, joins[lane]);
    rounds(p.gathers, Anchor::kLayerPrefetch, pass, chunk, layer, root, std::nullopt);
    for (const graph::CommNode& n : graph_->comm) {
      if (n.anchor == Anchor::kLayerPrefetch && n.after_layer && runs_in(n, pass, false)) p.late_gathers = true;
    }
    if (pass == 1) rounds(p.reductions, Anchor::kLayerEnd, pass, chunk, layer, root, std::nullopt);
    return p;
  };
  for (const graph::CommNode& n : graph_->comm) st.has_root = st.has_root || n.root.value() > 0.0;
  st.layers.resize(static_cast<std::size_t>(graph_->vp));
  for (int c = 0; c < graph_->vp; ++c) {
    for (int pass = 0; pass < 2; ++pass) {
      auto& programs = st.layers[static_cast<std::size_t>(c)][static_cast<std::size_t>(pass)];
      for (int l = 0; l < work.passes(c); ++l) programs.push_back(program(pass, c, l, false));
    }
  }
  for (int pass = 0; pass < 2 && st.has_root; ++pass)
    st.root_layer[static_cast<std::size_t>(pass)] = program(pass, 0, 0, true);
  build_alone_programs(st);
  for (std::size_t i = 0; i < graph_->comm.size(); ++i) {
    const graph::CommNode& n = graph_->comm[i];
    if (n.anchor == Anchor::kAfterSlice) st.after_slice.push_back(add_slot(s, i, n.size));
    if (n.anchor == Anchor::kBesideSlice) {
      st.beside_slice.push_back(add_slot(s, i, n.size));
      st.tail = n.tail;
    }
  }
}

// moe-overlap pairs each task with one of the other pass (Megatron-Core's combined_1f1b.py: "the
// forward step for the first microbatch is executed alone, no a2a overlapping", and the last
// backward likewise; with a pipeline, the warm-up forwards and cool-down backwards): a task with
// no partner runs the calls it would hide before its compute, as without the overlap.
void StepRun::build_alone_programs(Stage& st) {
  const auto beside = [](const LayerProgram& p) { return !p.lanes[kLayerEndLane].empty(); };
  bool any = std::any_of(st.root_layer.begin(), st.root_layer.end(), beside);
  for (const auto& chunk : st.layers)
    for (const auto& pass : chunk) any = any || std::any_of(pass.begin(), pass.end(), beside);
  if (!any) return;
  const auto first_backward = std::find_if(st.ops.begin(), st.ops.end(),
                                           [](const PipelineOp& o) { return o.kind == PipelineOp::Kind::kBackward; });
  const auto last_forward = std::find_if(st.ops.rbegin(), st.ops.rend(), [](const PipelineOp& o) {
                              return o.kind == PipelineOp::Kind::kForward;
                            }).base();
  st.alone.assign(st.ops.size(), false);
  for (std::size_t i = 0; i < st.ops.size(); ++i) {
    const auto at = st.ops.begin() + static_cast<std::ptrdiff_t>(i);
    const PipelineOp& o = st.ops[i];
    st.alone[i] = (o.kind == PipelineOp::Kind::kForward && at < first_backward) ||
                  (o.kind == PipelineOp::Kind::kBackward && at >= last_forward);
  }
  const auto alone_copy = [](LayerProgram p) {
    std::vector<std::uint32_t>& calls = p.lanes[kLayerEndLane];
    p.lanes[kBlockingLane].insert(p.lanes[kBlockingLane].end(), calls.begin(), calls.end());
    calls.clear();
    return p;
  };
  st.layers_alone = st.layers;
  for (auto& chunk : st.layers_alone)
    for (auto& pass : chunk)
      for (LayerProgram& p : pass) p = alone_copy(p);
  for (std::size_t pass = 0; pass < 2; ++pass) st.root_layer_alone[pass] = alone_copy(st.root_layer[pass]);
}

// Buckets of every gradient sync, in order; bucket j of all syncs becomes ready when the
// cumulative bytes up to it have been produced by its task (evenly over its compute).
void StepRun::build_buckets(int s) {
  Stage& st = stages_[static_cast<std::size_t>(s)];
  if (graph_->layout.replicas <= 1) return;
  std::vector<std::size_t> syncs;
  for (std::size_t n = 0; n < graph_->comm.size(); ++n) {
    if (graph_->comm[n].anchor == Anchor::kGradientReady) syncs.push_back(n);
  }
  if (syncs.empty()) return;
  // Per task, the buckets of every sync that reduces there, in sync order; not overlapped
  // (overlap-grad-reduce=off) every bucket is ready when the task ends.
  const auto add = [&](const std::vector<std::pair<std::size_t, double>>& here, std::size_t op) {
    double total = 0.0;
    for (const auto& [n, count] : here) total += graph_->comm[n].size.value() * count;
    double cumulative = 0.0;
    const auto push = [&](std::uint32_t slot, Bytes size, bool overlapped) {
      cumulative += size.value();
      st.buckets.push_back(Bucket{slot, op, total > 0.0 && overlapped ? std::min(1.0, cumulative / total) : 1.0});
    };
    for (const auto& [n, count] : here) {
      const graph::CommNode& node = graph_->comm[n];
      const double whole = std::floor(count);
      const double rest = count - whole;
      for (double j = 0; j < whole; j += 1.0) push(add_slot(s, n, node.size), node.size, node.overlapped);
      if (rest > 1e-9) push(add_slot(s, n, node.size * rest), node.size * rest, node.overlapped);
    }
  };
  // A chunk's share of the stage's gradients: its share of the compute (the weights its matmuls
  // use), an even share where the stage computes nothing.
  const graph::StageWork& work = graph_->stages[static_cast<std::size_t>(s)];
  const auto share = [&](int chunk) {
    const double total = work.forward.value();
    return total > 0.0 ? work.chunks[static_cast<std::size_t>(chunk)].forward.value() / total : 1.0 / graph_->vp;
  };
  // Megatron-LM wraps each model chunk in its own DDP (megatron/training/training.py, get_model)
  // and enables a chunk's gradient sync for its last micro-batch (pipeline_parallel/schedules.py,
  // interleaved schedule), so a once-per-step sync's buckets of chunk c fill during chunk c's last
  // backward, which the cooldown runs before the lower chunks': that task holds chunk c's. Not
  // overlapped (finalize_model_grads), all wait for the step's last gradient task.
  std::vector<std::size_t> chunk_last(static_cast<std::size_t>(graph_->vp), st.grad_ops.back());
  for (const std::size_t op : st.grad_ops) chunk_last[static_cast<std::size_t>(st.ops[op].chunk)] = op;
  for (const std::size_t op : st.grad_ops) {
    const bool last = op == st.grad_ops.back();
    const bool chunk_ends = op == chunk_last[static_cast<std::size_t>(st.ops[op].chunk)];
    std::vector<std::pair<std::size_t, double>> here;
    for (const std::size_t n : syncs) {
      const graph::CommNode& node = graph_->comm[n];
      const double chunk_pieces = node.pieces * share(st.ops[op].chunk);
      if (node.every_micro_batch || (node.overlapped && chunk_ends)) {
        // Every micro-batch's buckets over its chunks' tasks, or a chunk's at its last backward.
        here.emplace_back(n, chunk_pieces);
      } else if (!node.overlapped && last) {
        here.emplace_back(n, node.pieces);
      }
    }
    add(here, op);
  }
}

// Each rank's schedules: the calls inside its layers on its own component's groups, the stream's
// on every group of the stage; its sends to its peers of the next and the previous stage.
void StepRun::resolve_schedules(int k) {
  Rank& rk = rank(k);
  const int s = rk.stage;
  Stage& st = stage_of(rk);
  rk.schedule_of.assign(st.slots.size(), 0);
  rk.occurrences.assign(st.slots.size(), 0);
  rk.expected.assign(st.slots.size(), replicas_);
  for (std::uint32_t slot = 0; slot < st.slots.size(); ++slot) {
    const graph::CommNode& node = node_of(st, slot);
    if (node.anchor == Anchor::kStageSend) continue;
    const bool lane =
        node.anchor == Anchor::kAfterSlice || node.anchor == Anchor::kBesideSlice || node.anchor == Anchor::kLayerStart;
    int component = -1;
    if (lane) {
      const GroupRun& run = group_run(s, node.group);
      component = run.component_of_replica[static_cast<std::size_t>(rk.replica)];
      rk.expected[slot] = run.ranks_of_component[static_cast<std::size_t>(component)];
    }
    rk.schedule_of[slot] = schedule_for(s, slot, component);
  }
  if (!st.has_send || !options_->contention) {
    // No send node (a pipeline handing over for free), or a send of the analytical price: no link.
    if (st.has_send) st.send_delay = des::to_ticks(isolated_price(st, st.send_slot).time);
    to_next_.push_back(network_.pattern(std::span<const std::pair<int, int>>{}));
    to_prev_.push_back(to_next_.back());
    return;
  }
  const std::size_t group = node_of(st, st.send_slot).group;
  const auto pairs_of = [&](int stage) {
    const GroupRun& run = group_run(stage, group);
    const int c = run.component_of_replica[static_cast<std::size_t>(rk.replica)];
    std::vector<std::pair<int, int>> pairs;
    for (const std::vector<int>& p : run.components[static_cast<std::size_t>(c)]) pairs.emplace_back(p[0], p[1]);
    return pairs;
  };
  to_next_.push_back(network_.pattern(pairs_of(s)));
  std::vector<std::pair<int, int>> back = pairs_of((s + pp() - 1) % pp());
  for (auto& [a, b] : back) std::swap(a, b);
  to_prev_.push_back(network_.pattern(back));
}

void StepRun::build_tracks() {
  tracks_.clear();
  std::string roles;
  for (const graph::CommNode& node : graph_->comm) {
    if (node.anchor != Anchor::kAfterSlice && node.anchor != Anchor::kBesideSlice && node.anchor != Anchor::kLayerStart)
      continue;
    const std::string& role = graph_->groups[node.group].role;
    if (roles.find(role) == std::string::npos) roles += roles.empty() ? role : "/" + role;
  }
  const graph::Layout& layout = graph_->layout;
  std::vector<std::string> lanes;
  for (int k = 0; k < rank_count(); ++k) {
    const Rank& rk = rank(k);
    const int g = layout.gpu(rk.replica, rk.stage, 0);
    const std::string who = replicas_ == 1 ? fmt::format("GPU {} (stage {})", g, rk.stage)
                                           : fmt::format("GPU {} (stage {}, replica {})", g, rk.stage, rk.replica);
    tracks_.push_back(who + " compute");
    if (has_layer_calls_) lanes.push_back(fmt::format("{} {} comm", who, roles.empty() ? "layer" : roles));
  }
  tracks_.insert(tracks_.end(), lanes.begin(), lanes.end());
  for (int s = 0; s < pp(); ++s)
    tracks_.push_back(fmt::format("GPU {} (stage {}) data-parallel comm", layout.gpu(0, s, 0), s));
  for (const auto tier : {topology::LinkTier::kIntraNode, topology::LinkTier::kNic, topology::LinkTier::kFabric}) {
    tracks_.push_back(fmt::format("links: {}", topology::to_string(tier)));
  }
  for (int k = 0; k < rank_count(); ++k) {
    const Rank& rk = rank(k);
    tracks_.push_back(fmt::format("GPU {} (stage {}) pipeline sends", layout.gpu(rk.replica, rk.stage, 0), rk.stage));
  }
}

}  // namespace stepcast::sim::detail
