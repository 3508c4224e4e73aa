// Pipeline bubble fractions: (p-1)/m (Narayanan et al. 2021, section 2.2.1), (p-1)/(v*m)
// interleaved (section 2.2.2); ZB-H1's time from its passes (Qi et al. 2023).
#include <doctest/doctest.h>

#include <vector>

#include "stepcast/cost/pipeline.hpp"

namespace pipeline_test {

using stepcast::Seconds;
using stepcast::cost::bubble_fraction;
using stepcast::cost::cooldown_microbatches;
using stepcast::cost::held_microbatches;
using stepcast::cost::StagePasses;
using stepcast::cost::zb_h1_pipeline;
using stepcast::plan::Schedule;

namespace {

/// Stages of F, B, W in milliseconds.
std::vector<StagePasses> ms(const std::vector<std::vector<double>>& passes) {
  std::vector<StagePasses> out;
  for (const auto& f_b_w : passes)
    out.push_back({Seconds(f_b_w[0] * 1e-3), Seconds(f_b_w[1] * 1e-3), Seconds(f_b_w[2] * 1e-3)});
  return out;
}

}  // namespace

TEST_SUITE("cost.pipeline") {
  TEST_CASE("1F1B and GPipe bubble is (p-1)/m: p = 4, m = 8 gives 3/8") {
    CHECK(bubble_fraction(Schedule::k1F1B, 4, 8, 1) == doctest::Approx(0.375));
    CHECK(bubble_fraction(Schedule::kGpipe, 4, 8, 1) == doctest::Approx(0.375));
  }
  TEST_CASE("interleaved bubble is (p-1)/(v*m): p = 4, m = 8, v = 2 gives 3/16") {
    CHECK(bubble_fraction(Schedule::kInterleaved, 4, 8, 2) == doctest::Approx(0.1875));
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
  TEST_CASE("one stage has no bubble and holds one micro-batch") {
    CHECK(bubble_fraction(Schedule::k1F1B, 1, 8, 1) == 0.0);
    CHECK(held_microbatches(Schedule::kGpipe, 1, 8, 1) == 1.0);
  }
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
