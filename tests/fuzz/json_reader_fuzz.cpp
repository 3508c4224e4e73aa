// Fuzz target: any text fed to the JSON reader either parses or fails with an InputError that
// names its origin; walking the result through JsonReader never crashes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "stepcast/core/json_reader.hpp"

namespace {

void walk(const stepcast::JsonReader& r, int depth) {
  if (depth > 64) return;
  const auto& j = r.json();
  try {
    if (j.is_object()) {
      for (const auto& [key, child] : r.members()) walk(child, depth + 1);
      (void)r.find("bandwidth");
      r.check_keys({"name", "source"});
    } else if (j.is_array()) {
      for (const auto& child : r.elements()) walk(child, depth + 1);
    } else if (j.is_string()) {
      (void)r.quantity<stepcast::BytesPerSecond>();
    } else if (j.is_number()) {
      (void)r.count();
    }
  } catch (const stepcast::InputError& e) {
    STEPCAST_ASSERT(!e.message().empty(), "an input error says what is wrong");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto doc = stepcast::parse_json_text(text, "fuzz.json");
    walk(stepcast::JsonReader(doc, "fuzz.json"), 0);
  } catch (const stepcast::InputError& e) {
    STEPCAST_ASSERT(e.file() == "fuzz.json", "a parse error names its origin");
  }
  return 0;
}
