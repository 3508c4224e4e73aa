// Number and text formats shared by `stepcast collective`'s renderings.
#include "stepcast/report/collective_format.hpp"

#include <fmt/format.h>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace stepcast::report {

double sig9(double v) { return std::strtod(fmt::format("{:.9g}", v).c_str(), nullptr); }

nlohmann::json bytes_json(Bytes b) {
  const double v = b.value();
  if (v == std::floor(v) && std::fabs(v) < 0x1.0p53) return static_cast<std::int64_t>(v);
  return sig9(v);
}

double gbps(BytesPerSecond r) { return sig9(r.value() / unit::kGiga); }

std::string placement_text(const topology::CommTiers& t) {
  return fmt::format("{} on {} node{} ({} per node)", t.ranks, t.nodes, t.nodes == 1 ? "" : "s", t.ranks_per_node);
}

std::string bytes_text(Bytes b) { return fmt::format("{} ({} B)", format_bytes(b), bytes_json(b).dump()); }

}  // namespace stepcast::report
