// The analytical engine's arithmetic of calls: windows from the compute, each node's calls per
// pass counted from its placement, and their prices from the one collective model.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "analytical_rules.hpp"

namespace stepcast::graph::detail {

Seconds max0(Seconds t) { return t.value() > 0.0 ? t : Seconds(0.0); }

Windows windows_of(const StepGraph& graph) {
  Windows w;
  const cost::StageCompute& critical = graph.compute.stages[static_cast<std::size_t>(graph.compute.critical_stage)];
  w.forward = critical.forward;
  w.backward = critical.backward;
  for (const StageWork& st : graph.stages) {
    w.forward = std::min(w.forward, st.forward);
    w.backward = std::min(w.backward, st.backward);
    w.layers = std::max(w.layers, st.layers());
  }
  w.attention_forward = graph.compute.attention_forward;
  w.attention_backward = graph.compute.attention_backward;
  w.micro_batches = graph.micro_batches;
  w.vp = graph.vp;
  return w;
}

Pricer::Pricer(const StepGraph& graph, const Pricing& pricing)
    : graph_(&graph), pricing_(&pricing), cache_(pricing.cache ? pricing.cache : &own_) {
  if (!cache_->hardware) {
    // What NCCL reads of the GPUs, once (none where NCCL's model does not know them).
    cache_->hardware.emplace();
    if (cost::nccl_compute_capability(pricing.topology->gpu()))
      *cache_->hardware = cost::nccl_hardware(*pricing.topology);
  }
}

PriceCache::Priced Pricer::price(const CommNode& node, Bytes size) {
  const GroupSpec& g = graph_->groups[node.group];
  const PriceCache::GroupKey key{g.ranks, g.stride, g.concurrency.groups,
                                 g.concurrency.groups > 1 ? g.concurrency.offset : 0};
  auto group = cache_->groups.find(key);
  if (group == cache_->groups.end()) {
    group = cache_->groups
                .emplace(key, cost::collective_group(*cache_->hardware,
                                                     pricing_->topology->tiers(g.ranks, g.stride, g.concurrency)))
                .first;
  }
  const std::tuple price_key{key, static_cast<int>(node.op), size.value()};
  auto it = cache_->prices.find(price_key);
  if (it == cache_->prices.end()) {
    const cost::CollectivePrice p = cost::price_collective(group->second, node.op, size, pricing_->model);
    it = cache_->prices
             .emplace(price_key, PriceCache::Priced{p.time, cost::model_name(p), p.outside_calibration, p.blocks})
             .first;
  }
  return it->second;
}

Seconds Pricer::time(const CommNode& node, const Calls& calls) {
  Seconds total;
  for (const CallGroup& g : calls.groups) total += time(node, g.size) * static_cast<double>(g.count);
  return total;
}

bool Pricer::inside_node(const CommNode& node) const {
  const GroupSpec& g = graph_->groups[node.group];
  return pricing_->topology->tiers(g.ranks, g.stride, g.concurrency).nodes <= 1;
}

namespace {

/// Calls of a layer-anchored node in one pass of one micro-batch through stage `s`.
int stage_calls(const StepGraph& graph, const CommNode& node, int s) {
  int calls = 0;
  for (int c = 0; c < graph.vp; ++c) {
    for (int l = 0; l < graph.stages[static_cast<std::size_t>(s)].passes(c); ++l)
      calls += graph.calls_at(node, s, c, l);
  }
  return calls;
}

/// Calls of a layer-anchored node in one pass of one micro-batch through the busiest stage.
int layer_calls(const StepGraph& graph, const CommNode& node) {
  int most = 0;
  for (int s = 0; s < static_cast<int>(graph.stages.size()); ++s) most = std::max(most, stage_calls(graph, node, s));
  return most;
}

/// A unit's calls in one pass of each of `m` micro-batches: the pass's units, the first carrying
/// the root (the parameters outside the layers), even where the pass holds no unit, as the
/// simulator issues them.
Calls unit_calls(const CommNode& node, int per_pass, std::int64_t m) {
  Calls calls;
  if (!(node.root.value() > 0.0)) {
    calls.add(m * per_pass, node.size);
    return calls;
  }
  calls.add(m * (std::max(per_pass, 1) - 1), node.size);
  calls.add(m, node.size + node.root);
  return calls;
}

/// `pieces` buckets of `size`, `repeats` times: whole ones and a smaller last one. A count within
/// 1e-9 of a whole number is that number (the bytes were divided by the size), as the Chakra
/// export counts them.
Calls bucket_calls(const CommNode& node, std::int64_t repeats) {
  Calls calls;
  if (!(node.size.value() > 0.0)) return calls;
  const double whole = std::floor(node.pieces + 1e-9);
  calls.add(static_cast<std::int64_t>(whole) * repeats, node.size);
  if (const double rest = node.pieces - whole; rest > 1e-9) calls.add(repeats, node.size * rest);
  return calls;
}

}  // namespace

std::vector<double> stage_shares(const StepGraph& graph, const CommNode& node) {
  std::vector<double> shares;
  for (int s = 0; s < static_cast<int>(graph.stages.size()); ++s) {
    // A slice's calls are the same in every layer.
    shares.push_back(node.anchor == Anchor::kLayerStart ? stage_calls(graph, node, s)
                                                        : graph.stages[static_cast<std::size_t>(s)].layers());
  }
  const double most = *std::max_element(shares.begin(), shares.end());
  for (double& share : shares) share = most > 0.0 ? share / most : 0.0;
  return shares;
}

NodeLoad load_of(const StepGraph& graph, const CommNode& node, const Windows& w, Pricer& pricer) {
  NodeLoad load;
  const std::int64_t m = w.micro_batches;
  switch (node.anchor) {
    case Anchor::kAfterSlice:
    case Anchor::kBesideSlice:
      load.forward_calls.add(m * w.layers * graph.forward_slices, node.size);
      load.backward_calls.add(m * w.layers * graph.backward_slices, node.size);
      break;
    case Anchor::kLayerStart: {
      const std::int64_t per_pass = m * layer_calls(graph, node);
      if (node.pass != Pass::kBackward) load.forward_calls.add(per_pass, node.size);
      if (node.pass != Pass::kForward) load.backward_calls.add(per_pass, node.size);
      break;
    }
    case Anchor::kLayerPrefetch:
    case Anchor::kLayerEnd: {
      // Every micro-batch moves the layers' units and the root.
      const bool forward = node.anchor == Anchor::kLayerPrefetch && node.pass == Pass::kForward;
      (forward ? load.forward_calls : load.backward_calls) = unit_calls(node, layer_calls(graph, node), m);
      break;
    }
    case Anchor::kGradientReady:
      load.backward_calls = bucket_calls(node, node.every_micro_batch ? m : 1);
      break;
    case Anchor::kAfterOptimizer:
    case Anchor::kStepStart:
      load.forward_calls = bucket_calls(node, 1);
      break;
    case Anchor::kStageSend:
      // Every micro-batch's activations forward and gradients backward, once per model chunk.
      load.forward_calls.add(m * w.vp, node.size);
      load.backward_calls.add(m * w.vp, node.size);
      break;
  }
  load.forward = pricer.time(node, load.forward_calls);
  load.backward = pricer.time(node, load.backward_calls);
  return load;
}

}  // namespace stepcast::graph::detail
