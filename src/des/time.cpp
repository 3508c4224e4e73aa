// Seconds to picosecond ticks: the one place a floating time becomes an integer event time.
#include "stepcast/des/time.hpp"

#include <fmt/format.h>
#include <cmath>

#include "stepcast/core/errors.hpp"

namespace stepcast::des {

Tick to_ticks(Seconds t) {
  STEPCAST_ASSERT(std::isfinite(t.value()), "a duration must be finite");
  STEPCAST_ASSERT(t.value() >= 0.0, "a duration must not be negative");
  const double ticks = std::round(t.value() * kTicksPerSecond);
  // 2^63 is exactly representable as a double; anything at or above it does not fit in Tick.
  constexpr double kLimit = 9223372036854775808.0;
  if (ticks >= kLimit) {
    throw InputError(fmt::format("simulated time {} s exceeds the engine's range of {:.0f} s (int64 picoseconds)",
                                 t.value(), kLimit / kTicksPerSecond));
  }
  return static_cast<Tick>(ticks);
}

}  // namespace stepcast::des
