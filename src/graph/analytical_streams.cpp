// Exposure of the calls on a stage's data-parallel stream: FSDP / ZeRO-3 units gathered a layer
// ahead and reduce-scattered behind, gradient buckets behind the backward, and the updated
// parameters' gathers at the step's ends.
#include <algorithm>
#include <cmath>

#include "analytical_rules.hpp"
#include "stepcast/cost/pipeline.hpp"

namespace stepcast::graph::detail {

namespace {

/// Shares `exposed` among the terms `ids` in proportion to their time.
void share(Evaluation& e, const std::vector<std::size_t>& ids, Seconds exposed) {
  Seconds total;
  for (const std::size_t i : ids) total += e.terms[i].time;
  for (const std::size_t i : ids) {
    e.terms[i].exposed = total.value() > 0.0 ? exposed * (e.terms[i].time / total) : Seconds(0.0);
  }
}

/// The compute stream's waits on layer-start calls that leave the NICs free (their group stays in
/// a node): the stream's prefetched gathers keep running through them, so they widen its windows.
std::pair<Seconds, Seconds> waits_inside_nodes(Evaluation& e) {
  Seconds forward;
  Seconds backward;
  for_anchor(e, Anchor::kLayerStart, [&](std::size_t i, const CommNode& node) {
    const NodeLoad& load = e.loads[i];
    if (!e.pricer.inside_node(node) || !(load.time().value() > 0.0)) return;
    forward += e.terms[i].exposed * (load.forward / load.time());
    backward += e.terms[i].exposed * (load.backward / load.time());
  });
  const double m = e.w.micro_batches;
  return {forward / m, backward / m};
}

// The calls one pass over a model chunk makes, one after another, at its layer 0 or at its last
// layer: what the pass's start or end waits for. Layer 0 of the first chunk carries the root
// parameters; summed over the v chunks of a micro-batch.
Seconds edge_calls(Evaluation& e, const CommNode& node, bool layer_zero) {
  Seconds total;
  for (int c = 0; c < e.graph.vp; ++c) {
    const bool root = layer_zero && c == 0;
    Seconds most;
    for (int s = 0; s < static_cast<int>(e.graph.stages.size()); ++s) {
      const int layer = layer_zero ? 0 : e.graph.stages[static_cast<std::size_t>(s)].passes(c) - 1;
      const int calls = e.graph.calls_at(node, s, c, layer);
      if (calls == 0) continue;
      const Bytes first = root ? node.size + node.root : node.size;
      most = std::max(most, e.pricer.time(node, first) + e.pricer.time(node, node.size) * (calls - 1));
    }
    total += most;
  }
  return total;
}

/// How long the forwards wait for the step-start gathers of `chunks` model chunks, each chunk
/// holding an even share, on one stream. Megatron-Core issues the first two chunks' gathers at the
/// step's start and each later chunk's when the chunk before it runs its first forward (schedules.py,
/// forward_backward_pipelining_with_interleaving: param_sync_func); a chunk's first forward waits
/// for its gathers, the first chunk's for its first bucket only (its layers wait bucket by bucket:
/// finish_param_sync), and `forwards` forwards of a chunk run before the next chunk's first. With
/// one chunk: max(first bucket, gathers - first forward).
Seconds chunk_gather_wait(Seconds gathers, Seconds first_bucket, Seconds chunk_forward, double forwards, int chunks) {
  const Seconds per_chunk = gathers / chunks;
  Seconds wait = std::max(first_bucket, max0(per_chunk - chunk_forward));
  Seconds stream = per_chunk;  // when the stream has gathered the chunks issued so far
  Seconds start = wait;        // when the latest chunk's first forward started, the waits so far included
  for (int c = 1; c < chunks; ++c) {
    const Seconds issued = c == 1 ? Seconds(0.0) : start;
    const Seconds due = start + chunk_forward * forwards;
    stream = std::max(stream, issued) + per_chunk;
    wait += max0(stream - due);
    start = std::max(due, stream);
  }
  return wait;
}

}  // namespace

// Prefetching the next unit while one computes hides the gathers behind the compute (Zhao et al.
// 2023, section 3.3), but for the first unit of each pass over a model chunk, and but for what
// they take beyond the compute when the group's share of the NICs is too slow. In the backward
// the regathers and the reduce-scatters share the stream and the backward's compute; the pass's
// last reduce-scatters, issued as it ends, hide behind nothing of it, and the next pass's first
// gather waits behind them on the stream. Gathers issued only as the layer before ends (PyTorch
// FSDP's BACKWARD_POST) hide behind nothing: the next layer waits for each whole.
void expose_sharded_units(Evaluation& e) {
  std::vector<std::size_t> forward;
  std::vector<std::size_t> backward;
  std::vector<std::size_t> regathers;
  Seconds first_forward;   // per micro-batch: the forward's gathers of each pass's first layer
  Seconds first_backward;  // ... the backward's regathers of each pass's first (the chunk's last) layer
  Seconds last_reduction;  // ... the reduce-scatters after each backward pass's last layer
  for_anchor(e, Anchor::kLayerPrefetch, [&](std::size_t i, const CommNode& node) {
    if (node.after_layer) {
      e.terms[i].exposed = e.terms[i].time;
      return;
    }
    if (node.pass == Pass::kBackward) {
      backward.push_back(i);
      regathers.push_back(i);
      first_backward += edge_calls(e, node, false);
      return;
    }
    forward.push_back(i);
    first_forward += edge_calls(e, node, true);
  });
  for_anchor(e, Anchor::kLayerEnd, [&](std::size_t i, const CommNode& node) {
    backward.push_back(i);
    last_reduction += edge_calls(e, node, true);
  });
  if (forward.empty() && backward.empty()) return;
  const double m = e.w.micro_batches;
  const auto [forward_wait, backward_wait] = waits_inside_nodes(e);
  Seconds forward_total;
  for (const std::size_t i : forward) forward_total += e.terms[i].time;
  share(e, forward,
        std::min(forward_total, (max0(forward_total / m - e.w.forward - forward_wait) + first_forward) * m));
  Seconds backward_total;
  for (const std::size_t i : backward) backward_total += e.terms[i].time;
  share(
      e, backward,
      std::min(backward_total, std::max(max0(backward_total / m - e.w.backward - backward_wait), last_reduction) * m));
  // Each backward pass's first regather is exposed, as the forward's.
  Seconds gathers;
  for (const std::size_t i : regathers) gathers += e.terms[i].time;
  if (!(gathers.value() > 0.0)) return;
  const Seconds first = first_backward * m;
  for (const std::size_t i : regathers) {
    CommTerm& t = e.terms[i];
    t.exposed = std::min(t.time, t.exposed + first * (t.time / gathers));
  }
}

// Buckets hide behind the backward that produces them but for the last, ready only when the
// backward ends (Li et al. 2020, section 3.2); the stream's later syncs have what the earlier ones
// leave of the window. ZeRO-2 reduces every micro-batch on every stage at once, so a stage's
// stream runs through the other stages' forwards too, but in the pipeline's cooldown the first
// stage, which ends the step, runs backward passes only, and what each one's reduce-scatters take
// beyond it piles up to the step's end.
namespace {

/// Each model chunk's gradients are ready once its last micro-batch's backward runs (Megatron-Core's
/// interleaved schedule enables a chunk's gradient sync on that backward), chunk k from the end
/// k x p chunk-backwards before the stage's last ends; each chunk's 1/v of the `time`
/// reduce-scatters start as its backward does and queue on the one stream behind the chunks
/// ready before it. One chunk (v = 1) leaves time - backward: the buckets hide behind the
/// backward that produces them.
Seconds chunked_gradient_backlog(Seconds time, Seconds backward, int p, int v) {
  const Seconds chunk_backward = backward / v;
  Seconds worst;
  for (int k = 0; k < v; ++k) {
    worst = std::max(worst, max0(time * ((k + 1.0) / v) - chunk_backward * (k * static_cast<double>(p) + 1.0)));
  }
  return worst;
}

}  // namespace

void expose_gradient_buckets(Evaluation& e) {
  const double m = e.w.micro_batches;
  Seconds used;
  for_anchor(e, Anchor::kGradientReady, [&](std::size_t i, const CommNode& node) {
    CommTerm& t = e.terms[i];
    if (!node.overlapped) {
      t.exposed = t.time;
      used += t.time;
      return;
    }
    const double reductions = node.every_micro_batch ? m : 1.0;
    const Seconds last = e.pricer.time(node, node.size * std::min(1.0, node.pieces));
    Seconds backlog = max0(t.time - max0(e.w.backward * reductions - used));
    if (used.value() == 0.0 && node.every_micro_batch && e.graph.layout.pp > 1) {
      const Seconds window = e.w.forward + e.w.backward;
      const double cooldown = std::min(
          cost::cooldown_microbatches(e.graph.schedule, e.graph.layout.pp, e.graph.micro_batches, e.graph.vp), m);
      backlog = std::max(max0(t.time / reductions - e.w.backward) * cooldown,
                         max0(t.time - window * (m - cooldown) - e.w.backward * cooldown));
    } else if (used.value() == 0.0 && !node.every_micro_batch) {
      backlog = chunked_gradient_backlog(t.time, e.w.backward, e.graph.layout.pp, e.graph.vp);
    }
    t.exposed = std::max(backlog, last);
    used += t.time;
  });
}

// After the optimizer nothing overlaps the updated parameters' gather. At the step's start it
// runs beside the first forwards, model chunk by chunk (chunk_gather_wait); the step-start nodes
// (dense and expert parameters) share that stream and its wait in proportion to their time.
void expose_step_ends(Evaluation& e) {
  for_anchor(e, Anchor::kAfterOptimizer, [&](std::size_t i, const CommNode&) { e.terms[i].exposed = e.terms[i].time; });
  std::vector<std::size_t> gathers;
  Seconds first_bucket;
  for_anchor(e, Anchor::kStepStart, [&](std::size_t i, const CommNode& node) {
    if (gathers.empty()) first_bucket = e.pricer.time(node, node.size * std::min(1.0, node.pieces));
    gathers.push_back(i);
  });
  if (gathers.empty()) return;
  Seconds total;
  for (const std::size_t i : gathers) total += e.terms[i].time;
  const double forwards = std::min(e.graph.layout.pp, e.w.micro_batches);
  share(e, gathers, std::min(total, chunk_gather_wait(total, first_bucket, e.w.forward / e.w.vp, forwards, e.w.vp)));
}

}  // namespace stepcast::graph::detail
