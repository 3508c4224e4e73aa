// Number and text formats shared by `stepcast collective`'s renderings (alpha-beta and NCCL).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "stepcast/core/units.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::report {

/// `v` rounded to 9 significant digits (STYLE.md B6), so JSON output is stable and readable.
double sig9(double v);
/// A byte count: an exact integer when it is one, else 9 significant digits.
nlohmann::json bytes_json(Bytes b);
/// GB/s (1e9 B/s) with 9 significant digits.
double gbps(BytesPerSecond r);
/// "8 on 1 node (8 per node)".
std::string placement_text(const topology::CommTiers& t);
/// "1 GiB (1073741824 B)".
std::string bytes_text(Bytes b);

}  // namespace stepcast::report
