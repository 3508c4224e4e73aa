// Pipeline bubble fractions: (p-1)/m (Narayanan et al. 2021, section 2.2.1), (p-1)/(v*m)
// interleaved (section 2.2.2), a third of 1F1B's for ZB-H1 (Qi et al. 2023).
#include <doctest/doctest.h>

#include "stepcast/cost/pipeline.hpp"

using stepcast::cost::bubble_fraction;
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
}
