// The analytical engine's arithmetic of calls: windows from the compute, each node's calls per
// pass counted from its placement, and their prices from the one collective model.
#include <algorithm>
#include <cmath>

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
    it =
        cache_->prices.emplace(price_key, PriceCache::Priced{p.time, cost::model_name(p), p.outside_calibration}).first;
  }
  return it->second;
}

Seconds Pricer::pieces(const CommNode& node, Bytes total, Bytes piece) {
  if (!(piece.value() > 0.0)) return Seconds(0.0);
  const double whole = std::floor(total / piece);
  const Bytes rest = total - piece * whole;
  return time(node, piece) * whole + time(node, rest);
}

bool Pricer::inside_node(const CommNode& node) const {
  const GroupSpec& g = graph_->groups[node.group];
  return pricing_->topology->tiers(g.ranks, g.stride, g.concurrency).nodes <= 1;
}

namespace {

/// Calls of a layer-anchored node in one pass of one micro-batch through the busiest stage.
double layer_calls(const StepGraph& graph, const CommNode& node) {
  double most = 0.0;
  for (int s = 0; s < static_cast<int>(graph.stages.size()); ++s) {
    double calls = 0.0;
    for (int c = 0; c < graph.vp; ++c) {
      for (int l = 0; l < graph.stages[static_cast<std::size_t>(s)].passes(c); ++l)
        calls += graph.calls_at(node, s, c, l);
    }
    most = std::max(most, calls);
  }
  return most;
}

}  // namespace

NodeLoad load_of(const StepGraph& graph, const CommNode& node, const Windows& w, Pricer& pricer) {
  NodeLoad load;
  const double m = w.micro_batches;
  const Seconds one = pricer.time(node, node.size);
  switch (node.anchor) {
    case Anchor::kAfterSlice:
    case Anchor::kBesideSlice:
      load.forward_calls = m * w.layers * graph.forward_slices;
      load.backward_calls = m * w.layers * graph.backward_slices;
      break;
    case Anchor::kLayerStart: {
      const double per_pass = m * layer_calls(graph, node);
      load.forward_calls = node.pass == Pass::kBackward ? 0.0 : per_pass;
      load.backward_calls = node.pass == Pass::kForward ? 0.0 : per_pass;
      break;
    }
    case Anchor::kLayerPrefetch:
    case Anchor::kLayerEnd: {
      // The parameters outside the layers ride in the first layer's call, as the simulator and the
      // Chakra export issue it (even where the pass holds no unit): every micro-batch moves the
      // layers' units, the first carrying the root.
      const double per_pass = layer_calls(graph, node);
      const Bytes total = node.size * per_pass + node.root;
      const bool root = node.root.value() > 0.0;
      const double units = root ? std::max(per_pass, 1.0) : per_pass;
      const Seconds time =
          (root ? pricer.time(node, node.size) * (units - 1.0) + pricer.time(node, node.size + node.root)
                : one * units) *
          m;
      const double calls = (node.size.value() > 0.0 ? total / node.size : 0.0) * m;
      const bool forward = node.anchor == Anchor::kLayerPrefetch && node.pass == Pass::kForward;
      (forward ? load.forward_calls : load.backward_calls) = calls;
      (forward ? load.forward : load.backward) = time;
      return load;
    }
    case Anchor::kGradientReady: {
      const double reductions = node.every_micro_batch ? m : 1.0;
      load.backward_calls = node.pieces * reductions;
      load.backward = pricer.pieces(node, node.size * node.pieces, node.size) * reductions;
      return load;
    }
    case Anchor::kAfterOptimizer:
    case Anchor::kStepStart:
      load.forward_calls = node.pieces;
      load.forward = pricer.pieces(node, node.size * node.pieces, node.size);
      return load;
    case Anchor::kStageSend:
      // Every micro-batch's activations forward and gradients backward, once per model chunk.
      load.forward_calls = m * w.vp;
      load.backward_calls = m * w.vp;
      break;
  }
  load.forward = one * load.forward_calls;
  load.backward = one * load.backward_calls;
  return load;
}

}  // namespace stepcast::graph::detail
