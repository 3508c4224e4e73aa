// Seconds to picosecond ticks: rounding and the overflow check.
#include <doctest/doctest.h>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/des/time.hpp"

namespace time_test {

using namespace stepcast;
using stepcast::des::to_seconds;
using stepcast::des::to_ticks;

TEST_SUITE("des.time") {
  TEST_CASE("one tick is one picosecond, durations round to the nearest tick") {
    CHECK(to_ticks(seconds(1.0)) == 1'000'000'000'000);
    CHECK(to_ticks(microseconds(2.0)) == 2'000'000);
    // 1.4 ps rounds down, 1.6 ps rounds up.
    CHECK(to_ticks(seconds(1.4e-12)) == 1);
    CHECK(to_ticks(seconds(1.6e-12)) == 2);
    // The seed's 0.490 s: 2*7/8 x 14e9 B / 50e9 B/s = 0.49 s = 490e9 ps.
    CHECK(to_ticks(seconds(0.49)) == 490'000'000'000);
    CHECK(to_seconds(490'000'000'000).value() == doctest::Approx(0.49));
  }

  TEST_CASE("a duration beyond 2^63 ps (about 106.75 days) is refused as bad input") {
    // 2^63 ps = 9223372.036854775808 s; 1e7 s is beyond it, 9e6 s is inside.
    CHECK(to_ticks(seconds(9e6)) == 9'000'000'000'000'000'000);
    CHECK_THROWS_AS(to_ticks(seconds(1e7)), InputError);
  }

  TEST_CASE("a negative duration is a bug") { CHECK_THROWS_AS(to_ticks(seconds(-1.0)), InternalError); }
}

}  // namespace time_test
