// Echoing --set edits, so a what-if states what it asked (the p4d file's NIC bandwidth is per NIC:
// "200 Gbps" there doubles the node's 400 Gbps instead of halving it).
#include "stepcast/report/set_echo.hpp"

#include <fmt/format.h>

#include <optional>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/topology/overrides.hpp"

namespace stepcast::report {

namespace {

/// A JSON string value holding a bandwidth ("\"100 Gbps\""), or nothing.
std::optional<BytesPerSecond> bandwidth_of(const std::string& json_text) {
  if (json_text.size() < 2 || json_text.front() != '"') return std::nullopt;
  try {
    return parse_quantity<BytesPerSecond>(json_text.substr(1, json_text.size() - 2));
  } catch (const UnitError&) {
    return std::nullopt;
  }
}

}  // namespace

std::string set_echo_text(const std::filesystem::path& topology_file, const std::vector<std::string>& sets) {
  std::string out;
  for (const topology::AppliedSet& a : topology::applied_sets(topology_file, sets)) {
    out += fmt::format("Set: {} {} -> {}", a.path, a.before, a.after);
    const auto before = bandwidth_of(a.before);
    const auto after = bandwidth_of(a.after);
    if (a.block_count > 1 && before && after) {
      const bool nics = a.path.find("nics") != std::string::npos;
      out += fmt::format(" ({}; {} {}: {} -> {})", nics ? "per NIC" : "each", a.block_count,
                         nics ? "NICs per node" : "of them", format_gbps(*before * static_cast<double>(a.block_count)),
                         format_gbps(*after * static_cast<double>(a.block_count)));
    } else if (a.block_count > 1) {
      out += fmt::format(" (each of {})", a.block_count);
    }
    out += "\n";
  }
  return out;
}

}  // namespace stepcast::report
