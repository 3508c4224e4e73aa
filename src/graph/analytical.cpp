// Evaluating a step graph's communication in closed form: price every node, count its calls from
// its placement, then apply each anchor's exposure rule (analytical_layers.cpp,
// analytical_streams.cpp). The layer-start rule runs before the sharded units', whose windows the
// layer-start waits widen.
#include "stepcast/graph/analytical.hpp"

#include <algorithm>

#include "analytical_rules.hpp"

namespace stepcast::graph {

namespace {

bool inside_layers(Anchor a) {
  return a == Anchor::kAfterSlice || a == Anchor::kBesideSlice || a == Anchor::kLayerStart;
}

/// The compute time a call's hidden part takes from the compute beside it: that part (its time less
/// its exposed part) times the SM share its blocks hold.
Seconds compute_slowed_beside(const CommTerm& t, int sm_count) {
  return (t.time - t.exposed) * cost::sm_share(t.blocks, sm_count);
}

}  // namespace

AnalyticalComm evaluate_communication(const StepGraph& graph, const Pricing& pricing) {
  detail::Pricer pricer(graph, pricing);
  const detail::Windows w = detail::windows_of(graph);
  std::vector<detail::NodeLoad> loads;
  AnalyticalComm out;
  for (const CommNode& node : graph.comm) {
    const GroupSpec& group = graph.groups[node.group];
    loads.push_back(detail::load_of(graph, node, w, pricer));
    const Seconds all = loads.back().time();
    out.forward_share.push_back(all.value() > 0.0 ? loads.back().forward / all : 0.0);
    const PriceCache::Priced price = pricer.price(node, node.size);
    CommTerm t;
    t.name = node.name;
    t.role = group.role;
    t.op = node.op;
    t.model = price.model;
    t.ranks = group.ranks;
    t.stride = group.stride;
    t.size = node.size;
    t.calls = loads.back().calls();
    t.time = loads.back().time();
    t.outside_calibration = price.outside_calibration;
    t.blocks = price.blocks;
    out.terms.push_back(std::move(t));
  }
  detail::Evaluation e{graph, w, pricer, loads, out.terms, pricing.explain, {}};
  detail::expose_slices(e);
  detail::expose_layer_starts(e);
  detail::expose_sends(e);
  detail::expose_sharded_units(e);
  detail::expose_gradient_buckets(e);
  detail::expose_step_ends(e);
  for (std::size_t i = 0; i < graph.comm.size(); ++i) {
    out.exposed += out.terms[i].exposed;
    if (inside_layers(graph.comm[i].anchor)) out.in_layers += out.terms[i].exposed;
  }
  out.ring_steps = std::move(e.ring_steps);
  return out;
}

std::vector<LayerWaits> stage_layer_waits(const AnalyticalComm& comm, const StepGraph& graph, int sm_count) {
  std::vector<LayerWaits> waits(graph.stages.size());
  for (std::size_t i = 0; i < graph.comm.size(); ++i) {
    if (!inside_layers(graph.comm[i].anchor)) continue;
    const CommTerm& t = comm.terms[i];
    const Seconds per_micro_batch = t.exposed / graph.micro_batches;
    const Seconds slowed = compute_slowed_beside(t, sm_count) / graph.micro_batches;
    const std::vector<double> shares = detail::stage_shares(graph, graph.comm[i]);
    const double forward = comm.forward_share[i];
    for (std::size_t s = 0; s < waits.size(); ++s) {
      waits[s].forward += per_micro_batch * shares[s] * forward;
      waits[s].backward += per_micro_batch * shares[s] * (1.0 - forward);
      waits[s].slowed_forward += slowed * shares[s] * forward;
      waits[s].slowed_backward += slowed * shares[s] * (1.0 - forward);
    }
  }
  return waits;
}

void pace_layer_calls(AnalyticalComm& comm, const StepGraph& graph, int stage, double exposed_part) {
  for (std::size_t i = 0; i < graph.comm.size(); ++i) {
    if (!inside_layers(graph.comm[i].anchor)) continue;
    const double share = detail::stage_shares(graph, graph.comm[i])[static_cast<std::size_t>(stage)];
    const Seconds paced = comm.terms[i].exposed * share * exposed_part;
    comm.exposed += paced - comm.terms[i].exposed;
    comm.in_layers += paced - comm.terms[i].exposed;
    comm.terms[i].exposed = paced;
  }
}

Seconds slow_compute_beside_calls(AnalyticalComm& comm, const StepGraph& graph, int sm_count) {
  Seconds lost;
  for (std::size_t i = 0; i < graph.comm.size(); ++i) {
    const Anchor anchor = graph.comm[i].anchor;
    if (anchor == Anchor::kStageSend) continue;
    CommTerm& t = comm.terms[i];
    const Seconds loss = compute_slowed_beside(t, sm_count);
    lost += loss;
    if (anchor == Anchor::kStepStart) {
      // The first model chunk's share of these calls runs beside its first forward: where they
      // outlast it, the pass they slow lasts as much longer and hides as much more of them.
      const Seconds hidden_more = std::min(t.exposed, loss / graph.vp);
      t.exposed -= hidden_more;
      comm.exposed -= hidden_more;
    }
  }
  return lost;
}

}  // namespace stepcast::graph
