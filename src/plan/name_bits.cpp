#include "name_bits.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace stepcast::plan {

std::optional<unsigned> name_bit(std::span<const NameBit> names, std::string_view name) {
  for (const auto& [bit, known] : names) {
    if (known == name) return bit;
  }
  return std::nullopt;
}

std::string name_bits_text(std::span<const NameBit> names, unsigned bits) {
  std::string out;
  for (const auto& [bit, name] : names) {
    if ((bits & bit) == 0U) continue;
    if (!out.empty()) out += '+';
    out += name;
  }
  return out;
}

unsigned parse_name_bits(std::span<const NameBit> names, std::string_view key, std::string_view value,
                         const std::function<std::string(std::string_view)>& unknown, const KeyFailure& fail) {
  unsigned bits = 0;
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t end = std::min(value.find('+', start), value.size());
    const std::string_view name = value.substr(start, end - start);
    const std::optional<unsigned> bit = name_bit(names, name);
    if (!bit) fail(unknown(name));
    if ((bits & *bit) != 0U) fail(fmt::format("{}= names {} twice", key, name));
    bits |= *bit;
    start = end + 1;
  }
  return bits;
}

}  // namespace stepcast::plan
