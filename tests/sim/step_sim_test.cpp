// The training step as a task graph: pipeline bubbles, DDP overlap, stragglers, determinism.
// Every expected time is derived by hand in the comments.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "hand_graph.hpp"
#include "star_topology.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/sim/pipeline_order.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"

namespace step_sim_test {

using namespace stepcast;
using namespace stepcast::sim;

namespace {

constexpr double kMs = 1e-3;

using graph::Anchor;
using sim::test::hand_node;
using sim::test::hand_step;

// p uniform stages, m micro-batches, forward 1 ms and backward 2 ms per micro-batch, nothing else.
graph::StepGraph pipeline(int p, int m, plan::Schedule schedule, int v = 1, int replicas = 1) {
  return hand_step(p, m, schedule, v, seconds(1 * kMs), seconds(2 * kMs), replicas);
}

// One stage of `replicas` data-parallel replicas, one micro-batch unless given.
graph::StepGraph replicated(int replicas, double forward_ms, double backward_ms, int m = 1) {
  return hand_step(1, m, plan::Schedule::k1F1B, 1, seconds(forward_ms * kMs), seconds(backward_ms * kMs), replicas);
}

// Gradient buckets over the data-parallel groups: `pieces` per step (per micro-batch when
// `every_micro_batch`), ready as the backward produces them.
void buckets(graph::StepGraph& g, const std::string& name, cost::CollectiveOp op, Bytes bucket, double pieces,
             bool every_micro_batch = false, bool overlapped = true) {
  graph::CommNode n =
      hand_node(name, sim::test::replica_group(g, "data", g.layout.replicas), op, bucket, Anchor::kGradientReady);
  n.pieces = pieces;
  n.every_micro_batch = every_micro_batch;
  n.overlapped = overlapped;
  g.comm.push_back(n);
}

// The updated parameters' all-gather: after the optimizer, or at the step's start in buckets.
void parameter_gather(graph::StepGraph& g, Bytes total, Bytes bucket = Bytes(0.0)) {
  graph::CommNode n = hand_node("ZeRO parameter all-gather", sim::test::replica_group(g, "data", g.layout.replicas),
                                cost::CollectiveOp::kAllGather, total, Anchor::kAfterOptimizer);
  if (bucket.value() > 0.0) {
    n.anchor = Anchor::kStepStart;
    n.size = bucket;
    n.pieces = total / bucket;
  }
  g.comm.push_back(n);
}

// Sends between stages of `size` each, blocking the sender or not.
void sends(graph::StepGraph& g, Bytes size, bool blocking) {
  graph::CommNode n =
      hand_node("PP send/recv", sim::test::stage_pairs(g), cost::CollectiveOp::kSendRecv, size, Anchor::kStageSend);
  n.blocking = blocking;
  g.comm.push_back(n);
}

SimOptions with(Perturbation p, bool trace = false) {
  SimOptions o;
  o.perturbation = p;
  o.record_trace = trace;
  return o;
}

}  // namespace

TEST_SUITE("sim.step") {
  TEST_CASE("1F1B and GPipe: the bubble is (p-1)/m of the ideal time") {
    // Ideal = m (F+B) = 8 x 3 ms = 24 ms; with p = 4 the step is (m+p-1)(F+B) = 11 x 3 = 33 ms,
    // a bubble of 9 ms = (p-1)/m x 24 ms = 3/8 x 24 ms (Narayanan et al. 2021, section 2.2.1).
    const topology::Topology t = sim::test::star_topology(4, gbyte_per_s(50));
    for (const auto schedule : {plan::Schedule::k1F1B, plan::Schedule::kGpipe}) {
      const StepResult r = simulate_step(t, pipeline(4, 8, schedule));
      CHECK(r.step_time.value() == doctest::Approx(33 * kMs));
      CHECK(r.breakdown.bubble.value() == doctest::Approx(9 * kMs));
      CHECK(r.breakdown.bubble.value() / (24 * kMs) == doctest::Approx(3.0 / 8.0));
      CHECK(r.breakdown.compute.value() == doctest::Approx(24 * kMs));
    }
  }

  TEST_CASE("interleaved 1F1B with v chunks: the bubble is (p-1)/(v m)") {
    // Each chunk's forward is F/v, backward B/v. Bubble = (p-1)(F+B)/v = 3 x 3 / 2 = 4.5 ms,
    // step = 24 + 4.5 = 28.5 ms; (p-1)/(v m) = 3/16 of 24 ms = 4.5 ms (Narayanan et al. 2021, 2.2.2).
    const topology::Topology t = sim::test::star_topology(4, gbyte_per_s(50));
    const StepResult r = simulate_step(t, pipeline(4, 8, plan::Schedule::kInterleaved, 2));
    CHECK(r.step_time.value() == doctest::Approx(28.5 * kMs));
    CHECK(r.breakdown.bubble.value() / (24 * kMs) == doctest::Approx(3.0 / 16.0));
  }

  TEST_CASE("ZB-H1 defers the weight gradients into 1F1B's bubble: (p-1)(F + B - W) instead of (p-1)(F + B + W)") {
    // Qi et al. 2023 ("Zero Bubble Pipeline Parallelism", section 3.1, ZB-H1): with the backward
    // split into its input-gradient part B and weight-gradient part W, 1F1B idles (p-1)(F + B + W)
    // per stage and ZB-H1, whose deferred W fill the cool-down, (p-1)(F + B - W). Here F = 1 ms
    // and the 2 ms backward is B = W = 1 ms: p = 4, m = 8, ideal 24 ms; 1F1B 24 + 3 x 3 = 33 ms,
    // ZB-H1 24 + 3 x 1 = 27 ms.
    const topology::Topology t = sim::test::star_topology(4, gbyte_per_s(50));
    const StepResult one = simulate_step(t, pipeline(4, 8, plan::Schedule::k1F1B));
    const StepResult zb = simulate_step(t, pipeline(4, 8, plan::Schedule::kZbH1));
    CHECK(one.step_time.value() == doctest::Approx(33 * kMs));
    CHECK(zb.step_time.value() == doctest::Approx(27 * kMs));
    CHECK(zb.breakdown.compute.value() == doctest::Approx(24 * kMs));
    const auto ops = pipeline_order(plan::Schedule::kZbH1, 4, 0, 8, 1);
    CHECK(ops.size() == 24);  // 8 F + 8 B + 8 W
  }

  TEST_CASE("DDP overlap: with backward longer than the all-reduce only the last bucket is exposed") {
    // dp = 4 on 50 GB/s, no latency; 4 buckets of 25e6 B. One bucket's ring all-reduce takes
    // 2 x 3/4 x 25e6 / 50e9 = 0.75 ms. Backward 10 ms produces a bucket every 2.5 ms (at 7.5, 10,
    // 12.5 and 15 ms after forward 5 ms); each bucket ends before the next is ready, so only the
    // last is exposed: 0.75 ms, and the step is 5 + 10 + 0.75 = 15.75 ms.
    const topology::Topology t = sim::test::star_topology(4, gbyte_per_s(50));
    graph::StepGraph s = replicated(4, 5, 10);
    buckets(s, "DDP gradient all-reduce", cost::CollectiveOp::kAllReduce, bytes(25e6), 4.0);
    const StepResult r = simulate_step(t, s);
    CHECK(r.breakdown.dp_exposed.value() == doctest::Approx(0.75 * kMs));
    CHECK(r.step_time.value() == doctest::Approx(15.75 * kMs));
  }

  TEST_CASE("ZeRO-2 reduces each micro-batch's gradients during that micro-batch's backward") {
    // dp = 2 on 50 GB/s, no latency; m = 2, F = 1 ms, B = 2 ms, one bucket of 200e6 B per
    // micro-batch: a ring reduce-scatter of (N-1)/N x S / B = 1/2 x 200e6 / 50e9 = 2 ms.
    // Order F0 0-1, B0 1-3, F1 3-4, B1 4-6. Bucket 0 is ready when B0 ends and runs 3-5, under
    // F1 and B1; bucket 1 is ready at 6 and runs 6-8: step 8 ms, 2 ms exposed. Were both reduced
    // through the last backward (ZeRO-1, DDP), bucket 0 would be ready halfway through B1, at 5,
    // run 5-7, and bucket 1 7-9: a step of 9 ms.
    const topology::Topology t = sim::test::star_topology(2, gbyte_per_s(50));
    graph::StepGraph s = replicated(2, 1, 2, 2);
    buckets(s, "ZeRO gradient reduce-scatter", cost::CollectiveOp::kReduceScatter, bytes(200e6), 1.0, true);
    CHECK(simulate_step(t, s).step_time.value() == doctest::Approx(8 * kMs));
    CHECK(simulate_step(t, s).breakdown.dp_exposed.value() == doctest::Approx(2 * kMs));
    // Once per step, the same two buckets: pieces 2 through the last backward.
    s.comm.front().every_micro_batch = false;
    s.comm.front().pieces = 2.0;
    CHECK(simulate_step(t, s).step_time.value() == doctest::Approx(9 * kMs));
  }

  TEST_CASE("ZeRO-1/2: the updated parameters' ring all-gather runs after the optimizer and ends the step") {
    // dp = 4 on 50 GB/s links of 5 us each, so a GPU-to-GPU route has alpha = 10 us. Ring
    // all-gather of S = 100e6 B: (N-1)/N x S / B + (N-1) alpha = 3/4 x 100e6 / 50e9 + 3 x 10 us
    // = 1.5 + 0.03 = 1.53 ms. Step = F 1 + B 2 + optimizer 0.5 + 1.53 = 5.03 ms.
    const topology::Topology t = sim::test::star_topology(4, gbyte_per_s(50), seconds(5e-6));
    graph::StepGraph s = replicated(4, 1, 2);
    s.optimizer = seconds(0.5 * kMs);
    parameter_gather(s, bytes(100e6));
    const StepResult r = simulate_step(t, s, with({}, true));
    CHECK(r.step_time.value() == doctest::Approx(5.03 * kMs));
    CHECK(r.breakdown.optimizer.value() == doctest::Approx(2.03 * kMs));
    const std::vector<std::string> path = {"F0.0 (stage 0)", "B0.0 (stage 0)", "optimizer (stage 0)",
                                           "ZeRO parameter all-gather (stage 0)"};
    CHECK(r.critical_path == path);
    // The gather is on stage 0's data-parallel comm track (after the compute track), not in the optimizer's span.
    bool on_comm_track = false;
    for (const TraceSpan& span : r.spans) {
      if (span.name == "ZeRO parameter all-gather") {
        on_comm_track =
            span.track == 1 && span.start_s == doctest::Approx(3.5 * kMs) && span.end_s == doctest::Approx(5.03 * kMs);
      }
      if (span.name == "optimizer") CHECK(span.end_s == doctest::Approx(3.5 * kMs));
    }
    CHECK(on_comm_track);
  }

  TEST_CASE("overlap-grad-reduce=off: every bucket waits for the backward's end") {
    // The DDP case above with the buckets reduced after the backward (Megatron-LM without
    // --overlap-grad-reduce): all four 0.75 ms all-reduces run after 15 ms, 3 ms exposed, 18 ms.
    const topology::Topology t = sim::test::star_topology(4, gbyte_per_s(50));
    graph::StepGraph s = replicated(4, 5, 10);
    buckets(s, "DDP gradient all-reduce", cost::CollectiveOp::kAllReduce, bytes(25e6), 4.0, false, false);
    const StepResult r = simulate_step(t, s);
    CHECK(r.breakdown.dp_exposed.value() == doctest::Approx(3 * kMs));
    CHECK(r.step_time.value() == doctest::Approx(18 * kMs));
  }

  TEST_CASE("interleaved DDP: each model chunk reduces its buckets from its own last backward") {
    // pp = 2, v = 2, m = 2, dp = 2 on 50 GB/s, no latency, no sends: chunks of F 0.5 and B 1 ms.
    // Stage 0 runs F0c0 F1c0 F0c1 F1c1 B0c1 B1c1 B0c0 B1c0; stage 1 F0c0 F1c0 F0c1 B0c1 F1c1
    // B1c1 B0c0 B1c0. Timeline: s0 F0c0 0-0.5, F1c0 0.5-1; s1 F0c0 0.5-1, F1c0 1-1.5; s0 F0c1
    // 1-1.5, F1c1 1.5-2; s1 F0c1 1.5-2, B0c1 2-3, F1c1 3-3.5, B1c1 3.5-4.5; s0 B0c1 3-4, B1c1
    // 4.5-5.5; s1 B0c0 4.5-5.5, B1c0 5.5-6.5; s0 B0c0 5.5-6.5, B1c0 6.5-7.5: 7.5 ms of compute.
    // Two DDP buckets of 50e6 B per stage, one per chunk (Megatron-LM wraps each model chunk in
    // its own DDP): a ring all-reduce over 2 ranks takes 2 x 1/2 x 50e6 / 50e9 = 1 ms. Stage 0's
    // chunk 1 bucket is ready when B1c1 ends (5.5) and runs 5.5-6.5, hidden; chunk 0's at 7.5
    // runs 7.5-8.5: step 8.5 ms, 1 ms exposed (the analytical max(2 - B, last) = 1 ms too).
    // Were both tied to the last backward, they would be ready at 7.0 and 7.5 and end at 9.0.
    const topology::Topology t = sim::test::star_topology(4, gbyte_per_s(50));
    // Replicas tp x pp = 2 GPUs apart: each stage's group on its own links.
    graph::StepGraph s = pipeline(2, 2, plan::Schedule::kInterleaved, 2, 2);
    buckets(s, "DDP gradient all-reduce", cost::CollectiveOp::kAllReduce, bytes(50e6), 2.0);
    StepResult r = simulate_step(t, s);
    CHECK(r.step_time.value() == doctest::Approx(8.5 * kMs));
    CHECK(r.breakdown.dp_exposed.value() == doctest::Approx(1 * kMs));
    // overlap-grad-reduce=off: both wait for the last backward (finalize_model_grads): 7.5 + 2.
    s.comm.front().overlapped = false;
    r = simulate_step(t, s);
    CHECK(r.step_time.value() == doctest::Approx(9.5 * kMs));
  }

  TEST_CASE("overlap-param-gather=on: the gather runs in buckets beside the first forward, which waits for the first") {
    // dp = 4 on 50 GB/s links of 5 us (alpha 10 us per route). S = 100e6 B in buckets of 40e6:
    // 40e6, 40e6, 20e6 B. A ring all-gather takes 3/4 x S / 50e9 + 3 x 10 us: 0.63, 0.63 and
    // 0.33 ms, all gathered at 1.59 ms. m = 2, F = 1, B = 2, optimizer 0.5 ms.
    // F0 starts with the first bucket at 0.63 and ends at 1.63, after the last: B0 1.63-3.63,
    // F1 3.63-4.63, B1 4.63-6.63, optimizer to 7.13 ms (gathered after it: 6.5 + 1.53 = 8.03).
    // With F = 0.5 ms, B0 waits for the last bucket: 1.59 + 2 + 0.5 + 2 + 0.5 = 6.59 ms. Both are
    // F + B + ... + max(first bucket, all buckets - F): 0.63 = max(0.63, 0.59); 1.09 = max(0.63, 1.09).
    const topology::Topology t = sim::test::star_topology(4, gbyte_per_s(50), seconds(5e-6));
    graph::StepGraph after = replicated(4, 1, 2, 2);
    after.optimizer = seconds(0.5 * kMs);
    graph::StepGraph before = after;
    parameter_gather(after, bytes(100e6));
    CHECK(simulate_step(t, after).step_time.value() == doctest::Approx(8.03 * kMs));
    parameter_gather(before, bytes(100e6), bytes(40e6));
    CHECK(simulate_step(t, before).step_time.value() == doctest::Approx(7.13 * kMs));
    for (graph::StageWork& st : before.stages) st.forward = st.chunks.front().forward = seconds(0.5 * kMs);
    CHECK(simulate_step(t, before).step_time.value() == doctest::Approx(6.59 * kMs));
  }

  TEST_CASE("overlap-param-gather=on with model chunks: a chunk's tasks wait for that chunk's buckets only") {
    // Two stages of two replicas each (dp = 2) on 50 GB/s links of 5 us, interleaved with v = 2,
    // m = 2, chunks of F 0.5 and B 1 ms, no sends: 7.5 ms without gathers (the interleaved test
    // below). Each stage gathers S = 100e6 B in buckets of 25e6, two a chunk, each a 2-rank ring:
    // 1/2 x 25e6 / 50e9 + 10 us = 0.26 ms; chunk 0's gathered at 0.52, chunk 1's at 1.04 ms.
    // Stage 0 runs F0c0 F1c0 F0c1 F1c1 B0c1 B1c1 B0c0 B1c0: F0c0 starts with the first bucket at
    // 0.26, F1c0 (0.76) finds chunk 0's gathered and F0c1 (1.26) chunk 1's, so the step is the 7.5 ms
    // shifted by the first bucket: 7.76 ms. Waiting for every bucket before the second task instead
    // holds F1c0 to 1.04 and the step to 8.04 ms (traced the same way).
    const topology::Topology t = sim::test::star_topology(4, gbyte_per_s(50), seconds(5e-6));
    graph::StepGraph g = pipeline(2, 2, plan::Schedule::kInterleaved, 2, 2);
    parameter_gather(g, bytes(100e6), bytes(25e6));
    CHECK(simulate_step(t, g).step_time.value() == doctest::Approx(7.76 * kMs));
  }

  TEST_CASE("pipeline sends: 1F1B waits for each, the interleaved schedule computes beside them") {
    // Two stages on 50 GB/s, no latency. 1F1B, m = 4, F = 1, B = 2 ms, 25e6 B per send: 0.5 ms,
    // and the sender waits for it (Megatron's non-interleaved p2p calls block). Stage 0 runs
    // F0 F1 B0 F2 B1 F3 B2 B3, stage 1 F0 B0 F1 B1 F2 B2 F3 B3:
    //   s0 F0 0-1 (send to 1.5), F1 1.5-2.5 (send to 3); s1 F0 1.5-2.5, B0 2.5-4.5 (send to 5),
    //   F1 5-6, B1 6-8 (send to 8.5); s0 B0 5-7, F2 7-8 (send to 8.5), B1 8.5-10.5, F3 10.5-11.5
    //   (send to 12); s1 F2 8.5-9.5, B2 9.5-11.5 (send to 12), F3 12-13, B3 13-15 (send to 15.5);
    //   s0 B2 12-14, B3 15.5-17.5. Step 17.5 ms, against (m+p-1)(F+B) = 15 without sends.
    const topology::Topology t = sim::test::star_topology(2, gbyte_per_s(50));
    graph::StepGraph one = pipeline(2, 4, plan::Schedule::k1F1B);
    sends(one, bytes(25e6), true);
    CHECK(simulate_step(t, one).step_time.value() == doctest::Approx(17.5 * kMs));
    // Interleaved, v = 2, m = 2: chunks of F 0.5 and B 1 ms, 12.5e6 B per send (0.25 ms), none
    // waited for by its sender. Virtual stages s0c0, s1c0, s0c1, s1c1. Stage 0 runs
    // F0c0 F1c0 F0c1 F1c1 B0c1 B1c1 B0c0 B1c0; stage 1 F0c0 F1c0 F0c1 B0c1 F1c1 B1c1 B0c0 B1c0:
    //   s0 F0c0 0-0.5, F1c0 0.5-1; s1 F0c0 0.75-1.25, F1c0 1.25-1.75; s0 F0c1 1.5-2, F1c1 2-2.5;
    //   s1 F0c1 2.25-2.75, B0c1 2.75-3.75, F1c1 3.75-4.25, B1c1 4.25-5.25; s0 B0c1 4-5, B1c1
    //   5.5-6.5; s1 B0c0 5.25-6.25, B1c0 6.75-7.75; s0 B0c0 6.5-7.5, B1c0 8-9. Step 9 ms: the
    //   7.5 ms without sends (6 + (p-1)(F+B)/v) and the 2(pv-1) = 6 hops of the first
    //   micro-batch's chain, 1.5 ms, the formula's fill and drain.
    graph::StepGraph inter = pipeline(2, 2, plan::Schedule::kInterleaved, 2);
    sends(inter, bytes(12.5e6), false);
    CHECK(simulate_step(t, inter).step_time.value() == doctest::Approx(9.0 * kMs));
  }

  TEST_CASE("one GPU at 1.5x slows the synchronous step by a hand-derived amount") {
    // p = 2, m = 4, F = 1, B = 2 ms; stage 1's GPU runs at 1.5x: F = 1.5, B = 3 ms. Stage 1
    // becomes the bottleneck: step = m x 1.5 (F+B) + (p-1)(F+B) = 4 x 4.5 + 3 = 21 ms (traced by
    // hand: stage 0's last backward runs 19..21 ms). Without the slow GPU (m+p-1)(F+B) = 15 ms,
    // so the wait on the straggler is 6 ms.
    const topology::Topology t = sim::test::star_topology(2, gbyte_per_s(50));
    Perturbation slow;
    slow.slow_gpu = 1;
    slow.slowdown = 1.5;
    const StepResult r = simulate_step(t, pipeline(2, 4, plan::Schedule::k1F1B), with(slow));
    CHECK(r.step_time.value() == doctest::Approx(21 * kMs));
    CHECK(r.breakdown.straggler_wait.value() == doctest::Approx(6 * kMs));
  }

  TEST_CASE("same seed, same noise: identical steps, another seed differs") {
    const topology::Topology t = sim::test::star_topology(4, gbyte_per_s(50));
    Perturbation noisy;
    noisy.noise_cv = 0.1;
    noisy.seed = 42;
    const StepResult a = simulate_step(t, pipeline(4, 8, plan::Schedule::k1F1B), with(noisy, true));
    const StepResult b = simulate_step(t, pipeline(4, 8, plan::Schedule::k1F1B), with(noisy, true));
    CHECK(a.step_time.value() == b.step_time.value());
    REQUIRE(a.spans.size() == b.spans.size());
    for (std::size_t i = 0; i < a.spans.size(); ++i) CHECK(a.spans[i].end_s == b.spans[i].end_s);
    noisy.seed = 43;
    const StepResult c = simulate_step(t, pipeline(4, 8, plan::Schedule::k1F1B), with(noisy));
    CHECK(c.step_time.value() != a.step_time.value());
  }
}

TEST_SUITE("sim.critical_path") {
  TEST_CASE("a slow second stage: the path enters stage 1 with the first send and leaves it with the last") {
    // p = 2, m = 4, 1F1B, sends free; stage 1's GPU at 1.5x (F = 1.5, B = 3 ms). Traced by hand:
    // stage 0 F0 0-1; stage 1 F0 1-2.5, B0 2.5-5.5, F1 5.5-7 (its input arrived at 2), B1 7-10,
    // F2 10-11.5 (input at 8.5), B2 11.5-14.5, F3 14.5-16 (input at 13), B3 16-19; stage 0's B3
    // waits for B3's gradient at 19 and runs 19-21, then stage 0's optimizer ends the step.
    // Each stage-1 task starts when its predecessor on stage 1 ends (or, after a backward, when
    // the send stage 1 waits for ends: 1F1B's sends block, free here), never when its input
    // arrives, so the path runs through all eight of stage 1's tasks and its backward sends.
    const topology::Topology t = sim::test::star_topology(2, gbyte_per_s(50));
    Perturbation slow;
    slow.slow_gpu = 1;
    slow.slowdown = 1.5;
    const StepResult r = simulate_step(t, pipeline(2, 4, plan::Schedule::k1F1B), with(slow));
    const std::vector<std::string> expected = {
        "F0.0 (stage 0)",           "send F0.0 (stage 0 -> 1)", "F0.0 (stage 1)",           "B0.0 (stage 1)",
        "send B0.0 (stage 1 -> 0)", "F1.0 (stage 1)",           "B1.0 (stage 1)",           "send B1.0 (stage 1 -> 0)",
        "F2.0 (stage 1)",           "B2.0 (stage 1)",           "send B2.0 (stage 1 -> 0)", "F3.0 (stage 1)",
        "B3.0 (stage 1)",           "send B3.0 (stage 1 -> 0)", "B3.0 (stage 0)",           "optimizer (stage 0)"};
    CHECK(r.critical_path == expected);
  }

  TEST_CASE("DDP: the path ends through the last gradient bucket") {
    // The DDP case above: the last bucket is ready when the backward ends and runs 0.75 ms after
    // it, so the optimizer starts from the fourth bucket, which the backward issued.
    const topology::Topology t = sim::test::star_topology(4, gbyte_per_s(50));
    graph::StepGraph s = replicated(4, 5, 10);
    buckets(s, "DDP gradient all-reduce", cost::CollectiveOp::kAllReduce, bytes(25e6), 4.0);
    const StepResult r = simulate_step(t, s);
    const std::vector<std::string> expected = {"F0.0 (stage 0)", "B0.0 (stage 0)", "DDP gradient all-reduce (stage 0)",
                                               "optimizer (stage 0)"};
    CHECK(r.critical_path == expected);
  }
}

}  // namespace step_sim_test
