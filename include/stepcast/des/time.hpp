// Simulated time as integer picoseconds (htsim): exact, totally ordered, about 106 days of range.
// Seconds enter and leave the engine only through to_ticks() and to_seconds().
#pragma once

#include <cstdint>
#include <limits>

#include "stepcast/core/units.hpp"

namespace stepcast::des {

/// A point or span of simulated time in picoseconds.
using Tick = std::int64_t;

/// Ticks per second: one tick is one picosecond.
inline constexpr double kTicksPerSecond = 1e12;

/// "No event": later than any tick a simulation can reach.
inline constexpr Tick kNever = std::numeric_limits<Tick>::max();

/// The duration `t` rounded to the nearest picosecond. Precondition: t >= 0 and finite.
/// Throws InputError when t exceeds the range of Tick (about 106 days), which only an absurd
/// input can cause.
Tick to_ticks(Seconds t);

/// The span `ticks` in seconds.
constexpr Seconds to_seconds(Tick ticks) { return Seconds(static_cast<double>(ticks) / kTicksPerSecond); }

}  // namespace stepcast::des
