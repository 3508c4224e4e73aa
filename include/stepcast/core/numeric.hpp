// Counts (ranks, steps, channels) as doubles for the cost formulas, in one place and one spelling.
#pragma once

#include <concepts>

namespace stepcast {

template <std::integral T>
constexpr double as_double(T count) {
  return static_cast<double>(count);
}

}  // namespace stepcast
