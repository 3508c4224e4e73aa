// A safety margin below a GPU's memory (--memory-margin): allocators fragment and frameworks
// allocate more than any model counts, so a plan 39.6 GiB into a 40 GiB GPU is not a plan to rent.
#pragma once

#include <string>
#include <string_view>

#include "stepcast/core/units.hpp"

namespace stepcast::cost {

/// A share of the capacity ("5%"), a size ("2 GiB"), or none.
struct MemoryMargin {
  double fraction = 0.0;    ///< of the GPU's capacity, in [0, 0.5)
  Bytes bytes;              ///< a fixed size, >= 0
  bool is_default = false;  ///< the commands' default_memory_margin(), not --memory-margin
  /// The bytes to keep free on a GPU of `capacity`.
  [[nodiscard]] Bytes of(Bytes capacity) const { return bytes + capacity * fraction; }
  [[nodiscard]] bool is_set() const { return fraction > 0.0 || bytes.value() > 0.0; }
  /// "5%" or "2 GiB", as given.
  [[nodiscard]] std::string to_string() const;
};

/// The margin commands keep when --memory-margin is not given: what PyTorch's caching allocator
/// loses to fragmentation while LLMs train (GMLake, Guo et al., ASPLOS 2024: 9.2 GB of an 80 GB
/// A100 on average over eight LLMs, up to 25 GB), as a share of the GPU's memory: 11.5%.
MemoryMargin default_memory_margin();

/// Parses "5%" (0 to under 50% of capacity) or a size with its unit ("2 GiB"); bad input throws
/// InputError naming `origin` (the option) and the forms accepted.
MemoryMargin parse_memory_margin(std::string_view text, const std::string& origin);

}  // namespace stepcast::cost
