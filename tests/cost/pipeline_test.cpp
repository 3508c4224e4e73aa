// Pipeline bubble fractions: (p-1)/m (Narayanan et al. 2021, section 2.2.1), (p-1)/(v*m)
// interleaved (section 2.2.2), a third of 1F1B's for ZB-H1 (Qi et al. 2023).
#include <doctest/doctest.h>

#include "stepcast/cost/pipeline.hpp"

using stepcast::cost::bubble_fraction;
using stepcast::cost::cooldown_microbatches;
using stepcast::cost::held_microbatches;
using stepcast::plan::Schedule;

TEST_SUITE("cost.pipeline") {
  TEST_CASE("1F1B and GPipe bubble is (p-1)/m: p = 4, m = 8 gives 3/8") {
    CHECK(bubble_fraction(Schedule::k1F1B, 4, 8, 1) == doctest::Approx(0.375));
    CHECK(bubble_fraction(Schedule::kGpipe, 4, 8, 1) == doctest::Approx(0.375));
  }
  TEST_CASE("interleaved bubble is (p-1)/(v*m): p = 4, m = 8, v = 2 gives 3/16") {
    CHECK(bubble_fraction(Schedule::kInterleaved, 4, 8, 2) == doctest::Approx(0.1875));
  }
  TEST_CASE("ZB-H1 bubble is (p-1)/(3m): p = 4, m = 8 gives 1/8") {
    CHECK(bubble_fraction(Schedule::kZbH1, 4, 8, 1) == doctest::Approx(0.125));
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
