// Parsing and printing --memory-margin.
#include "stepcast/cost/memory_margin.hpp"

#include <fmt/format.h>
#include <charconv>
#include <system_error>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/text.hpp"

namespace stepcast::cost {

MemoryMargin default_memory_margin() {
  MemoryMargin margin;
  margin.fraction = 9.2 / 80.0;  // GMLake's average fragmentation loss over the A100's 80 GB
  margin.is_default = true;
  return margin;
}

std::string MemoryMargin::to_string() const {
  if (fraction > 0.0) return fmt::format("{:g}%", fraction * 100.0);
  return format_bytes(bytes);
}

MemoryMargin parse_memory_margin(std::string_view text, const std::string& origin) {
  const std::string_view t = trim(text);
  constexpr std::string_view kForms =
      "a share of the GPU's memory such as \"5%\" (0 to under 50%) or a size such as \"2 GiB\"";
  MemoryMargin margin;
  if (t.ends_with('%')) {
    const std::string_view number = trim(t.substr(0, t.size() - 1));
    double percent = -1.0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), percent);
    // Half the GPU kept free is no longer a margin but a different GPU.
    if (ec != std::errc() || end != number.data() + number.size() || !(percent >= 0.0 && percent < 50.0)) {
      throw InputError(origin, {}, fmt::format("expected {}, got \"{}\"", kForms, text));
    }
    margin.fraction = percent / 100.0;
    return margin;
  }
  try {
    margin.bytes = parse_bytes(t);
  } catch (const UnitError& e) {
    throw InputError(origin, {}, fmt::format("expected {}: {}", kForms, e.what()));
  }
  if (margin.bytes.value() < 0.0) throw InputError(origin, {}, fmt::format("expected {}, got \"{}\"", kForms, text));
  return margin;
}

}  // namespace stepcast::cost
