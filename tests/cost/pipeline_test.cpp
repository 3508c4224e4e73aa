// Pipeline schedules' times from each stage's passes, derived by hand: on equal stages the bubble
// (p-1)/m of GPipe and 1F1B (Narayanan et al. 2021, section 2.2.1), (p-1)/(v*m) interleaved
// (section 2.2.2) and ZB-H1's (Qi et al. 2023); on unequal stages, the schedules played out.
#include <doctest/doctest.h>

#include <vector>

#include "stepcast/cost/pipeline.hpp"

namespace pipeline_test {

using stepcast::Seconds;
using stepcast::cost::cooldown_microbatches;
using stepcast::cost::gpipe_pipeline;
using stepcast::cost::held_microbatches;
using stepcast::cost::interleaved_pipeline;
using stepcast::cost::one_f_one_b_pipeline;
using stepcast::cost::pipeline_time;
using stepcast::cost::StagePasses;
using stepcast::cost::zb_h1_pipeline;
using stepcast::plan::Schedule;

namespace {

/// Stages of F, B, W in milliseconds.
std::vector<StagePasses> ms(const std::vector<std::vector<double>>& passes) {
  std::vector<StagePasses> out;
  for (const auto& f_b_w : passes)
    out.push_back({Seconds(f_b_w[0] * 1e-3), Seconds(f_b_w[1] * 1e-3), Seconds(f_b_w[2] * 1e-3), {}, {}});
  return out;
}

}  // namespace

TEST_SUITE("cost.pipeline") {
  TEST_CASE("1F1B and GPipe on equal stages: the bubble is (p-1)/m, p = 4 and m = 8 giving 3/8") {
    // F = 1, B = 2 ms: 8 x 3 = 24 ms of work and 3 x 3 = 9 ms of bubble, 33 ms. GPipe: the sum of
    // F and of B (4 + 8) plus 7 more of the slowest F and B (21).
    const auto stages = ms({{1, 2, 0}, {1, 2, 0}, {1, 2, 0}, {1, 2, 0}});
    CHECK(one_f_one_b_pipeline(stages, 8).time.value() == doctest::Approx(33e-3));
    CHECK(gpipe_pipeline(stages, 8).time.value() == doctest::Approx(33e-3));
  }
  TEST_CASE("interleaved on equal stages: the bubble is (p-1)/(v*m), p = 4, m = 8 and v = 2 giving 3/16") {
    // A stage's F = 2, B = 4 ms over 2 chunks: f = 1, b = 2. 16 x 3 = 48 ms of chunk work and 3 x 3
    // = 9 ms of bubble, 57 ms: 9 / 48 = 3/16.
    const auto stages = ms({{2, 4, 0}, {2, 4, 0}, {2, 4, 0}, {2, 4, 0}});
    CHECK(interleaved_pipeline(stages, 8, 2, stepcast::Seconds(0.0)).time.value() == doctest::Approx(57e-3));
  }
  TEST_CASE(
      "1F1B with the slowest stage first: it runs its warm-up while the others turn, 28 ms where m x slowest + "
      "the others would be 34") {
    // p = 3, m = 4, (F, B) = (3, 4), (1, 2), (1, 2) ms. Stage orders: 0 F0 F1 F2 B0 F3 B1 B2 B3, 1
    // F0 F1 B0 F2 B1 F3 B2 B3, 2 F0 B0 F1 B1 F2 B2 F3 B3. Stage 0: F0 F1 F2 0-9; stage 1's B0
    // (7-9, after stage 2's B0 5-7) is back as it ends, so B0 9-13, F3 13-16; stage 1's B1 ends at
    // 12, B1 16-20; stage 1's B2 17-19 (F3 16-17 first), B2 20-24; stage 1's B3 20-22 (after
    // stage 2's F3 B3 17-20), B3 24-28. Stage 0 never waits: 4 x 7 = 28 ms.
    const auto t = one_f_one_b_pipeline(ms({{3, 4, 0}, {1, 2, 0}, {1, 2, 0}}), 4);
    CHECK(t.time.value() == doctest::Approx(28e-3));
    CHECK(t.pacing_stage == 0);
  }
  TEST_CASE("interleaved with the slowest stage first: 16 ms where the mean of the others' bubble would give 17") {
    // p = 2, v = 2, m = 2; stage 0's chunks f = b = 2 ms, stage 1's f = b = 1 ms. Megatron-LM's
    // order: stage 0 warms up min(2 + 2, 4) = 4 forwards, F(c0,0) F(c0,1) F(c1,0) F(c1,1), then
    // B(c1,0) B(c1,1) B(c0,0) B(c0,1); stage 1 warms up 2: F(c0,0) F(c0,1) F(c1,0) B(c1,0)
    // F(c1,1) B(c1,1) B(c0,0) B(c0,1). Stage 0: forwards 0-2, 2-4, then 4-6 (stage 1's F(c0,0)
    // 2-3) and 6-8 (its F(c0,1) 4-5); stage 1's F(c1,0) B(c1,0) 6-8, F(c1,1) B(c1,1) 8-10; stage
    // 0's B(c1,0) 8-10, B(c1,1) 10-12; stage 1's B(c0,0) 10-11 and B(c0,1) 12-13; stage 0's
    // B(c0,0) 12-14, B(c0,1) 14-16. Stage 0 never waits: 8 x 2 = 16 ms. A quarter of the other
    // stage's m x (F + B) on top of stage 0's 16 would give 17.
    const auto t = interleaved_pipeline(ms({{4, 4, 0}, {2, 2, 0}}), 2, 2, stepcast::Seconds(0.0));
    CHECK(t.time.value() == doctest::Approx(16e-3));
    CHECK(t.pacing_stage == 0);
  }
  TEST_CASE("interleaved with transfers: the cool-down waits for the last micro-batch as the warm-up for the first") {
    // p = 2, v = 2, m = 2, chunks of f = 0.5 and b = 1 ms, each transfer 0.25 ms, hidden from the
    // sender. Megatron-LM's orders: stage 0 F(c0,0) F(c0,1) F(c1,0) F(c1,1) B(c1,0) B(c1,1)
    // B(c0,0) B(c0,1), stage 1 F(c0,0) F(c0,1) F(c1,0) B(c1,0) F(c1,1) B(c1,1) B(c0,0) B(c0,1).
    // s0 F 0-0.5, 0.5-1; s1 F(c0,0) 0.75-1.25, F(c0,1) 1.25-1.75; s0 F(c1,0) 1.5-2, F(c1,1) 2-2.5;
    // s1 F(c1,0) 2.25-2.75, B(c1,0) 2.75-3.75, F(c1,1) 3.75-4.25, B(c1,1) 4.25-5.25; s0 B(c1,0)
    // 4-5, B(c1,1) 5.5-6.5; s1 B(c0,0) 5.25-6.25, B(c0,1) 6.75-7.75 (waiting 0.5 for s0's B(c1,1));
    // s0 B(c0,0) 6.5-7.5, B(c0,1) 8-9. 9 ms: stage 1 waits 0.5 in its warm-up and 0.5 in its
    // cool-down; the warm-up's wait alone would give 8.5.
    const auto stages = ms({{1, 2, 0}, {1, 2, 0}});
    const auto t = interleaved_pipeline(stages, 2, 2, stepcast::Seconds(0.25e-3));
    CHECK(t.time.value() == doctest::Approx(9e-3));
    CHECK(t.pacing_stage == 1);
  }
  TEST_CASE("interleaved with a heavier last chunk: each chunk's passes, not their mean, set the waits") {
    // As above with transfers of 0.5 ms; stage 0's chunks f = 1, b = 2 ms, stage 1's chunk 0 the
    // same and its chunk 1 (the output layer's) f = 3, b = 4. s0 F(c0,0) 0-1, F(c0,1) 1-2; s1
    // F(c0,0) 1.5-2.5, F(c0,1) 2.5-3.5; s0 F(c1,0) 3-4, F(c1,1) 4-5; s1 F(c1,0) 4.5-7.5, B(c1,0)
    // 7.5-11.5, F(c1,1) 11.5-14.5, B(c1,1) 14.5-18.5, B(c0,0) 18.5-20.5 (s0's B(c1,0) 12-14), B(c0,1)
    // 21.5-23.5 (s0's B(c1,1) 19-21); s0 B(c0,0) 21-23, B(c0,1) 24-26. 26 ms; with stage 1's passes
    // split evenly over its chunks (f = 2, b = 3) the waits vanish and the formula gives 24.
    std::vector<StagePasses> stages = ms({{2, 4, 0}, {4, 6, 0}});
    stages[0].chunk_forward = {Seconds(1e-3), Seconds(1e-3)};
    stages[0].chunk_backward = {Seconds(2e-3), Seconds(2e-3)};
    stages[1].chunk_forward = {Seconds(1e-3), Seconds(3e-3)};
    stages[1].chunk_backward = {Seconds(2e-3), Seconds(4e-3)};
    CHECK(interleaved_pipeline(stages, 2, 2, stepcast::Seconds(0.5e-3)).time.value() == doctest::Approx(26e-3));
    CHECK(interleaved_pipeline(ms({{2, 4, 0}, {4, 6, 0}}), 2, 2, stepcast::Seconds(0.5e-3)).time.value() ==
          doctest::Approx(24e-3));
  }
  TEST_CASE("GPipe: the slowest forward and the slowest backward each repeat m-1 times, from different stages") {
    // p = 2, m = 3, (F, B) = (2, 1), (1, 3) ms. Forwards: stage 0 0-2, 2-4, 4-6; stage 1 2-3, 4-5,
    // 6-7. Backwards: stage 1 7-10, 10-13, 13-16; stage 0 10-11, 13-14, 16-17. 17 ms = 3 + 4 +
    // 2 x (2 + 3).
    CHECK(gpipe_pipeline(ms({{2, 1, 0}, {1, 3, 0}}), 3).time.value() == doctest::Approx(17e-3));
  }
  TEST_CASE("1F1B's blocking sends: the sender waits for each transfer") {
    // p = 2, m = 2, F = B = 1 ms, each transfer 1 ms. Stage 0: F0 0-1, send 1-2, F1 2-3, send 3-4.
    // Stage 1: F0 2-3, B0 3-4, send 4-5, F1 5-6, B1 6-7, send 7-8. Stage 0: B0 5-6, B1 8-9: 9 ms.
    const auto stages = ms({{1, 1, 0}, {1, 1, 0}});
    CHECK(pipeline_time(Schedule::k1F1B, stages, 2, 1, stepcast::Seconds(1e-3)).time.value() == doctest::Approx(9e-3));
  }
  TEST_CASE("ZB-H1 on equal stages: m(F+B+W) + (p-1)(F+B-W), a third of 1F1B's bubble when F = B = W") {
    // Qi et al. 2023, section 3.1: p = 4, m = 8. F = B = W = 1 ms: 24 + 3 x 1 = 27 ms, where 1F1B
    // idles 3 x 3 ms. B = 2 ms: 32 + 3 x 2 = 38 ms.
    CHECK(zb_h1_pipeline(ms({{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}), 8).time.value() == doctest::Approx(27e-3));
    CHECK(zb_h1_pipeline(ms({{1, 2, 1}, {1, 2, 1}, {1, 2, 1}, {1, 2, 1}}), 8).time.value() == doctest::Approx(38e-3));
  }
  TEST_CASE("ZB-H1 with a heavier last stage: it sets the pace, and the last B drains down before the last W") {
    // p = 3, m = 4, (F, B, W) = (2, 3, 1), (2, 3, 1), (3, 3, 1) ms. Stage 2 gets micro-batch 0 at
    // F0 + F1 = 4 ms and from then runs F B F B F B W F B W W W without a gap (each forward it
    // needs left stage 1 earlier): 4 x 7 = 28 ms, to 32 ms. Its last B ends before its 3 deferred
    // W's, at 32 - 3 = 29 ms, and runs down: stage 1's B 29-32, stage 0's B 32-35, then stage 0's
    // own W (it defers none) 35-36 ms. Step 36 ms; 1F1B would take 4 x 7 + 6 + 6 = 40 ms.
    const auto t = zb_h1_pipeline(ms({{2, 3, 1}, {2, 3, 1}, {3, 3, 1}}), 4);
    CHECK(t.time.value() == doctest::Approx(36e-3));
    CHECK(t.pacing_stage == 2);
  }
  TEST_CASE("ZB-H1 with fewer micro-batches than stages: no W is deferred past the last micro-batch") {
    // p = 4, m = 2, F = B = W = 1 ms. Micro-batch 0 reaches stage 3 at 3 ms; stage 3 runs F0 B0 F1
    // B1 (its F1 arrives at 4, during B0: no gap), 3-7, then its two deferred W's. Micro-batch 1's
    // B runs down from 7: stages 2, 1, 0 at 7-8, 8-9, 9-10, and stage 0 its W 10-11 (stages 1 and
    // 2 end at 9 + 2 and 8 + 2 with their two W's). Step 11 ms.
    CHECK(zb_h1_pipeline(ms({{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}), 2).time.value() == doctest::Approx(11e-3));
  }
  TEST_CASE("one stage holds one micro-batch") { CHECK(held_microbatches(Schedule::kGpipe, 1, 8, 1) == 1.0); }
  TEST_CASE("1F1B holds min(p, m) micro-batches on the first stage, GPipe all m") {
    CHECK(held_microbatches(Schedule::k1F1B, 4, 8, 1) == 4.0);
    CHECK(held_microbatches(Schedule::k1F1B, 4, 2, 1) == 2.0);
    CHECK(held_microbatches(Schedule::kGpipe, 4, 8, 1) == 8.0);
  }
  TEST_CASE("the first stage's cooldown mirrors its warm-up: backward passes after its last forward") {
    // GPipe runs every backward after every forward: all m. 1F1B: p-1 warm-up forwards, so p-1
    // backwards at the end (fewer when m is smaller).
    CHECK(cooldown_microbatches(Schedule::kGpipe, 4, 8, 1) == 8.0);
    CHECK(cooldown_microbatches(Schedule::k1F1B, 8, 24, 1) == 7.0);
    CHECK(cooldown_microbatches(Schedule::k1F1B, 8, 3, 1) == 3.0);
    // Interleaved, Megatron-LM's rank 0: (p-1) x 2 + (v-1) x p model-chunk passes; GPT-3's
    // p = 8, v = 12: 14 + 88 = 102 passes of 1/12 micro-batch each = 8.5 micro-batches.
    CHECK(cooldown_microbatches(Schedule::kInterleaved, 8, 24, 12) == doctest::Approx(8.5));
    // ... at most every pass: p = 4, v = 4, m = 4 -> min(6 + 12, 16) / 4 = 4.
    CHECK(cooldown_microbatches(Schedule::kInterleaved, 4, 4, 4) == doctest::Approx(4.0));
    CHECK(cooldown_microbatches(Schedule::k1F1B, 1, 8, 1) == 0.0);
  }
}

}  // namespace pipeline_test
