// Exposure of the calls inside the layers and between the stages: tensor-parallel slices, layer
// starts (context-parallel exchange, MoE dispatch and combine) and pipeline sends.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "analytical_rules.hpp"
#include "stepcast/cost/context_parallel.hpp"
#include "stepcast/cost/pipeline.hpp"

namespace stepcast::graph::detail {

namespace {

/// A term's calls in all, to share its time among.
double calls_of(const CommTerm& t) { return static_cast<double>(t.calls.count()); }

}  // namespace

// Between dependent GEMMs a slice's calls are all exposed. Beside them (tp-overlap), per slice
// (a GEMM block of a layer pass), what the calls take beyond the slice's compute plus the tail
// nothing hides is exposed.
void expose_slices(Evaluation& e) {
  for_anchor(e, Anchor::kAfterSlice, [&](std::size_t i, const CommNode&) { e.terms[i].exposed = e.terms[i].time; });
  std::vector<std::size_t> beside;
  Seconds per_slice;  // one call of each
  double tail = 0.0;
  for_anchor(e, Anchor::kBesideSlice, [&](std::size_t i, const CommNode& node) {
    beside.push_back(i);
    per_slice += e.terms[i].time / calls_of(e.terms[i]);
    tail = node.tail;
  });
  if (beside.empty()) return;
  const double layers = e.w.layers;
  const double forward_slices = e.graph.forward_slices;
  const double backward_slices = e.graph.backward_slices;
  double share_exposed = 1.0;
  if (per_slice.value() > 0.0) {
    const Seconds forward_slice = e.w.forward / (forward_slices * layers);
    const Seconds backward_slice = e.w.backward / (backward_slices * layers);
    const Seconds chunk = per_slice * tail;
    const Seconds exposed = (max0(per_slice - forward_slice) + chunk) * forward_slices +
                            (max0(per_slice - backward_slice) + chunk) * backward_slices;
    share_exposed = std::min(1.0, exposed / (per_slice * (forward_slices + backward_slices)));
  }
  for (const std::size_t i : beside) e.terms[i].exposed = e.terms[i].time * share_exposed;
}

// Calls before a layer's compute are exposed. A ring beside the attention exposes, per step, what
// its transfer takes beyond that step's attention (ring_exposed). Calls beside a whole layer pass
// (moe-overlap) expose those of the passes that run alone and what the others' calls take beyond
// their compute.
void expose_layer_starts(Evaluation& e) {
  std::array<std::vector<std::size_t>, 2> beside_pass;  // forward, backward
  std::array<Seconds, 2> beside_time;
  for_anchor(e, Anchor::kLayerStart, [&](std::size_t i, const CommNode& node) {
    CommTerm& t = e.terms[i];
    const NodeLoad& load = e.loads[i];
    if (node.join == Join::kBeforeCompute || node.window == Window::kNothing) {
      t.exposed = t.time;
      return;
    }
    if (node.window == Window::kAttentionSteps) {
      // A recomputed forward's ring runs beside the recomputed (forward) attention.
      const double calls = calls_of(t);
      const Seconds per_call = calls > 0.0 ? t.time / calls : Seconds(0.0);
      const bool forward = node.pass != Pass::kBackward;
      const Seconds attention = forward ? e.w.attention_forward : e.w.attention_backward;
      const Seconds per_layer_pass = cost::ring_exposed(per_call, node.layer_calls, attention, node.window_steps);
      const double layer_passes = calls / node.layer_calls;
      t.exposed = per_layer_pass * layer_passes;
      if (e.explain) {
        e.ring_steps.push_back(
            {t.name,
             fmt::format(
                 "{} steps per layer x {} ({}), {} per step beside an attention step of {}; {:.4g} layer passes",
                 node.layer_calls, format_bytes(node.size), cost::to_string(node.op), format_seconds(per_call),
                 format_seconds(attention / node.window_steps), layer_passes),
             fmt::format("{} exposed of {}", format_seconds(t.exposed), format_seconds(t.time))});
      }
      return;
    }
    for (std::size_t pass = 0; pass < 2; ++pass) {
      if ((pass == 0 ? load.forward_calls : load.backward_calls).count() > 0) beside_pass[pass].push_back(i);
      beside_time[pass] += pass == 0 ? load.forward : load.backward;
    }
    t.exposed = Seconds(0.0);
  });
  const double m = e.w.micro_batches;
  // The passes with no pass of the other kind to pair with (the first forward and the last
  // backward; a pipeline's warm-up and cool-down) run their calls before their compute.
  const double alone = std::min(
      1.0, cost::unpaired_microbatches(e.graph.schedule, e.graph.layout.pp, e.graph.micro_batches, e.graph.vp) / m);
  for (std::size_t pass = 0; pass < 2; ++pass) {
    // What the paired passes' calls take beyond their compute, shared by their time in the pass.
    const Seconds window = (pass == 0 ? e.w.forward : e.w.backward) * m * (1.0 - alone);
    const Seconds exposed = beside_time[pass] * alone + max0(beside_time[pass] * (1.0 - alone) - window);
    for (const std::size_t i : beside_pass[pass]) {
      const Seconds own = pass == 0 ? e.loads[i].forward : e.loads[i].backward;
      if (beside_time[pass].value() > 0.0) e.terms[i].exposed += exposed * (own / beside_time[pass]);
    }
  }
}

// Blocking sends are exposed. The interleaved schedule's transfer hides behind one chunk's compute
// in the steady state, and the fill and the drain wait for every hop of the first micro-batch
// through the p x v model chunks and back, 2(pv - 1) of them.
void expose_sends(Evaluation& e) {
  for_anchor(e, Anchor::kStageSend, [&](std::size_t i, const CommNode& node) {
    CommTerm& t = e.terms[i];
    const double calls = calls_of(t);
    if (node.blocking || !(calls > 0.0)) {
      t.exposed = t.time;
      return;
    }
    const Seconds per_call = t.time / calls;
    const Seconds chunk = std::min(e.w.forward, e.w.backward) / e.w.vp;
    const double fill_and_drain = std::min(calls, 2.0 * (e.graph.layout.pp * e.w.vp - 1));
    t.exposed = per_call * fill_and_drain + max0(per_call - chunk) * (calls - fill_and_drain);
  });
}

}  // namespace stepcast::graph::detail
