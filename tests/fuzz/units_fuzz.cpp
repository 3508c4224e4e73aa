// Fuzz target: the unit-string parsers must accept or refuse any text with a UnitError, never
// crash, and what they accept must be finite.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/units.hpp"

namespace {

template <class Parse>
void try_parse(Parse parse, std::string_view text) {
  try {
    const double v = parse(text).value();
    STEPCAST_ASSERT(std::isfinite(v), "a parsed quantity is finite");
  } catch (const stepcast::UnitError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try_parse(stepcast::parse_bytes, text);
  try_parse(stepcast::parse_bandwidth, text);
  try_parse(stepcast::parse_duration, text);
  try_parse(stepcast::parse_flops, text);
  try_parse(stepcast::parse_flops_rate, text);
  return 0;
}
