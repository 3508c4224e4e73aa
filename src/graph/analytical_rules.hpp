// The analytical engine's pieces (private to graph/): the windows the compute leaves, each node's
// calls per pass, pricing, and one exposure rule per family of anchors.
#pragma once

#include <vector>

#include "stepcast/graph/analytical.hpp"

namespace stepcast::graph::detail {

Seconds max0(Seconds t);

/// What communication can hide behind, from the graph's compute (one GPU, one micro-batch). Every
/// stage moves about the same gradients and parameters, so the stage with the shortest passes
/// (not the slowest, which sets the pace) hides the least and ends the step last (Narayanan et al.
/// 2021: the first stage drains last).
struct Windows {
  Seconds forward;
  Seconds backward;
  Seconds attention_forward;  ///< the fused attention of one layer
  Seconds attention_backward;
  int micro_batches = 1;
  int layers = 1;  ///< transformer layers of the busiest stage, all chunks
  int vp = 1;
};
Windows windows_of(const StepGraph& graph);

/// Prices one call of a node's collective at any size on its group.
class Pricer {
 public:
  Pricer(const StepGraph& graph, const Pricing& pricing);
  [[nodiscard]] PriceCache::Priced price(const CommNode& node, Bytes size);
  /// One call: NCCL's price and what a step's call costs beyond it (KernelParams::collective_overhead).
  [[nodiscard]] Seconds time(const CommNode& node, Bytes size) {
    return price(node, size).time + graph_->compute.params.collective_overhead;
  }
  /// Every call of `calls`, one after another.
  [[nodiscard]] Seconds time(const CommNode& node, const Calls& calls);
  /// The group stays inside one node (its calls leave the NICs free).
  [[nodiscard]] bool inside_node(const CommNode& node) const;

 private:
  const StepGraph* graph_;
  const Pricing* pricing_;
  PriceCache own_;
  PriceCache* cache_;
};

/// A node's calls and their time in the step, split by the pass they run in (stream nodes: all
/// in the backward, where the gradients come from; the parameters' gathers: the forward).
struct NodeLoad {
  Calls forward_calls;
  Calls backward_calls;
  Seconds forward;
  Seconds backward;
  [[nodiscard]] Calls calls() const {
    Calls all = forward_calls;
    all.add(backward_calls);
    return all;
  }
  [[nodiscard]] Seconds time() const { return forward + backward; }
};
NodeLoad load_of(const StepGraph& graph, const CommNode& node, const Windows& w, Pricer& pricer);

/// A node inside the layers (slice or layer-start anchor), per stage: the calls one micro-batch
/// makes there over those it makes on the busiest stage, which its load counts.
std::vector<double> stage_shares(const StepGraph& graph, const CommNode& node);

/// The state the rules share: the graph, its windows, each node's load and the terms being filled.
struct Evaluation {
  const StepGraph& graph;
  const Windows& w;
  Pricer& pricer;
  const std::vector<NodeLoad>& loads;
  std::vector<CommTerm>& terms;
  bool explain = true;
  Explanation ring_steps;
};

/// Calls f(index, node) for every node of `anchor`, in node order.
template <typename F>
void for_anchor(const Evaluation& e, Anchor anchor, F&& f) {
  for (std::size_t i = 0; i < e.graph.comm.size(); ++i) {
    if (e.graph.comm[i].anchor == anchor) f(i, e.graph.comm[i]);
  }
}

/// Each rule sets `exposed` of the terms of its anchors.
void expose_slices(Evaluation& e);
void expose_layer_starts(Evaluation& e);
void expose_sharded_units(Evaluation& e);
void expose_gradient_buckets(Evaluation& e);
void expose_step_ends(Evaluation& e);  // kAfterOptimizer, kStepStart
void expose_sends(Evaluation& e);

}  // namespace stepcast::graph::detail
