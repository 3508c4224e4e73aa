// Collectives around and inside layers as flows: FSDP/ZeRO-3 parameter gathers with prefetch and
// gradient reduce-scatters, and Megatron's tensor-parallel all-reduces between a layer's slices of
// compute. Every expected time is derived by hand in the comments.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "hand_graph.hpp"
#include "star_topology.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"

namespace layer_collectives_test {

using namespace stepcast;
using namespace stepcast::sim;

namespace {

constexpr double kMs = 1e-3;
constexpr double kUs = 1e-6;

using graph::Anchor;
using sim::test::hand_node;

// FSDP over 4 GPUs on 50 GB/s links, no latency, one micro-batch of 4 layers. A ring all-gather
// or reduce-scatter of S = 40e6 B takes (N-1)/N x S / B = 3/4 x 40e6 / 50e9 = 0.6 ms. Each layer's
// unit is gathered a layer ahead before its forward (and its backward, unless kept) and its
// gradients reduce-scattered after its backward.
graph::StepGraph fsdp(double forward_ms, double backward_ms, bool regather) {
  graph::StepGraph s = sim::test::hand_step(1, 1, plan::Schedule::k1F1B, 1, seconds(forward_ms * kMs),
                                            seconds(backward_ms * kMs), 4, 1, 4);
  const std::size_t shard = sim::test::replica_group(s, "shard group", 4);
  graph::CommNode gather = hand_node("FSDP all-gather (forward)", shard, cost::CollectiveOp::kAllGather, bytes(40e6),
                                     Anchor::kLayerPrefetch);
  s.comm.push_back(gather);
  if (regather) {
    gather.name = "FSDP all-gather (backward)";
    gather.pass = graph::Pass::kBackward;
    s.comm.push_back(gather);
  }
  graph::CommNode reduce = hand_node("FSDP gradient reduce-scatter", shard, cost::CollectiveOp::kReduceScatter,
                                     bytes(40e6), Anchor::kLayerEnd);
  reduce.pass = graph::Pass::kBackward;
  s.comm.push_back(reduce);
  return s;
}

// Tensor parallel over 8 ranks, `layers` layers of two slices per pass, `ops` after each slice.
graph::StepGraph tensor(int layers, const std::vector<cost::CollectiveOp>& ops) {
  graph::StepGraph s =
      sim::test::hand_step(1, 1, plan::Schedule::k1F1B, 1, seconds(1 * kMs), seconds(2 * kMs), 1, 8, layers);
  s.forward_slices = 2;
  s.backward_slices = 2;
  const std::size_t group = sim::test::tensor_group(s);
  for (const cost::CollectiveOp op : ops)
    s.comm.push_back(hand_node("TP", group, op, bytes(48e6), Anchor::kAfterSlice));
  return s;
}

}  // namespace

TEST_SUITE("sim.layers") {
  TEST_CASE("FSDP, layers longer than a gather: prefetch hides every gather but each pass's first") {
    // Forward 1 ms per layer, gather 0.6 ms. G0 0-0.6; L0 computes 0.6-1.6 while G1 (issued when
    // L0 starts) runs 0.6-1.2; so on: L3 ends at 0.6 + 4 x 1 = 4.6 ms. Backward (2 ms per layer,
    // gathered again): G3 4.6-5.2 exposed, L3 5.2-7.2 with G2 prefetched 5.2-5.8; each layer's
    // reduce-scatter (0.6 ms) and the next prefetch (0.6 ms) fit in the next layer's 2 ms; the
    // last layer ends at 5.2 + 4 x 2 = 13.2 ms and its reduce-scatter at 13.8 ms = the step.
    // Exposed: two first gathers (1.2 ms waiting) and the last reduce-scatter (0.6 ms).
    const topology::Topology t = sim::test::star_topology(4, BytesPerSecond(50e9), seconds(0.0), false);
    const StepResult r = simulate_step(t, fsdp(4.0, 8.0, true));
    CHECK(r.step_time.value() == doctest::Approx(13.8 * kMs));
    CHECK(r.breakdown.compute.value() == doctest::Approx(12.0 * kMs));
    CHECK(r.breakdown.wait("shard group").value() == doctest::Approx(1.2 * kMs));
    CHECK(r.breakdown.dp_exposed.value() == doctest::Approx(0.6 * kMs));
  }

  TEST_CASE("FSDP's BACKWARD_POST: each backward gather issued as the layer before ends, waited for whole") {
    // The forward as above: L3 ends at 4.6 ms. Backward: G3 4.6-5.2, L3 5.2-7.2; at its end G2
    // then RS3 go on the stream: G2 7.2-7.8, RS3 7.8-8.4, and L2 waits for G2: 7.8-9.8. So on:
    // G1 9.8-10.4, L1 10.4-12.4; G0 12.4-13.0, L0 13.0-15.0; RS0 15.0-15.6 = the step. Waiting
    // on gathers: the forward's first (0.6 ms) and all four backward ones (2.4 ms).
    const topology::Topology t = sim::test::star_topology(4, BytesPerSecond(50e9), seconds(0.0), false);
    graph::StepGraph g = fsdp(4.0, 8.0, true);
    for (graph::CommNode& n : g.comm)
      n.after_layer = n.pass == graph::Pass::kBackward && n.op == cost::CollectiveOp::kAllGather;
    const StepResult r = simulate_step(t, g);
    CHECK(r.step_time.value() == doctest::Approx(15.6 * kMs));
    CHECK(r.breakdown.wait("shard group").value() == doctest::Approx(3.0 * kMs));
    CHECK(r.breakdown.dp_exposed.value() == doctest::Approx(0.6 * kMs));
  }

  TEST_CASE("FSDP, layers shorter than a gather: the forward is gather-bound, L x gather + one layer") {
    // Forward 0.3 ms per layer, gather 0.6 ms, SHARD_GRAD_OP (no gather for the backward). Layer l
    // waits for G(l), which starts when G(l-1) ends: G(l) ends at (l+1) x 0.6 ms, so the forward
    // ends at 4 x 0.6 + 0.3 = 2.7 ms, having waited 0.6 + 3 x 0.3 = 1.5 ms for gathers. Backward
    // 0.6 ms per layer; each reduce-scatter (0.6 ms) runs beside the next layer: the last layer
    // ends at 2.7 + 4 x 0.6 = 5.1 ms and its reduce-scatter at 5.7 ms.
    const topology::Topology t = sim::test::star_topology(4, BytesPerSecond(50e9), seconds(0.0), false);
    const StepResult r = simulate_step(t, fsdp(1.2, 2.4, false));
    CHECK(r.step_time.value() == doctest::Approx(5.7 * kMs));
    CHECK(r.breakdown.wait("shard group").value() == doctest::Approx(1.5 * kMs));
    CHECK(r.breakdown.dp_exposed.value() == doctest::Approx(0.6 * kMs));
  }

  TEST_CASE("TP all-reduce of 8 GPUs on one NVSwitch node: the ring time 2(N-1)/N S/B + 2(N-1) alpha") {
    // 8 GPUs on one NVSwitch, 300 GB/s and 1 us per link, so a ring step GPU -> switch -> GPU
    // pays alpha = 2 us. S = 48e6 B: 2 x 7/8 x 48e6 / 300e9 = 0.28 ms, plus 14 x 2 us = 28 us:
    // 0.308 ms per all-reduce (Patarasuk and Yuan 2009; Thakur et al. 2005). One layer, two
    // all-reduces in the forward and two in the backward: step = 1 + 2 ms + 4 x 0.308 ms.
    const topology::Topology t = sim::test::star_topology(8, BytesPerSecond(300e9), seconds(1 * kUs), true);
    const StepResult r = simulate_step(t, tensor(1, {cost::CollectiveOp::kAllReduce}));
    const double all_reduce = 2.0 * 7.0 / 8.0 * 48e6 / 300e9 + 14 * 2 * kUs;
    CHECK(all_reduce == doctest::Approx(0.308 * kMs));
    CHECK(r.breakdown.wait("tensor").value() == doctest::Approx(4 * all_reduce));
    CHECK(r.step_time.value() == doctest::Approx(3 * kMs + 4 * all_reduce));
  }

  TEST_CASE("TP with sequence parallel: an all-gather and a reduce-scatter per slice cost one all-reduce") {
    // Each of S over 8 ranks moves (N-1)/N x S in N-1 steps: 7/8 x 48e6 / 300e9 + 7 x 2 us
    // = 0.154 ms, so the pair costs the same 0.308 ms as the all-reduce above.
    const topology::Topology t = sim::test::star_topology(8, BytesPerSecond(300e9), seconds(1 * kUs), true);
    const StepResult r =
        simulate_step(t, tensor(2, {cost::CollectiveOp::kAllGather, cost::CollectiveOp::kReduceScatter}));
    // Two layers, four slices per layer (two forward, two backward): 8 pairs.
    CHECK(r.step_time.value() == doctest::Approx(3 * kMs + 8 * 0.308 * kMs));
  }
}

}  // namespace layer_collectives_test
