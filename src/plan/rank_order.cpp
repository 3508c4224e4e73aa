// order=: the rank numbering a plan names, as Megatron-Core writes it (parallel_state.py's order
// string, "tp-cp-ep-dp-pp" by default): read into the two numberings stepcast lays out.
#include "rank_order.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

namespace stepcast::plan {

std::optional<RankOrder> parse_rank_order(std::string_view text, std::string& why) {
  constexpr std::array<std::string_view, 5> kDimensions = {"tp", "cp", "ep", "dp", "pp"};
  std::vector<std::string_view> names;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('-', start), text.size());
    const std::string_view name = text.substr(start, end - start);
    if (std::find(kDimensions.begin(), kDimensions.end(), name) == kDimensions.end()) {
      why = fmt::format("\"{}\" is not a dimension (tp, cp, ep, dp, pp, joined by '-')", name);
      return std::nullopt;
    }
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      why = fmt::format("{} appears twice: an order names each dimension once", name);
      return std::nullopt;
    }
    names.push_back(name);
    start = end + 1;
  }
  const auto at = [&](std::string_view name) {
    return static_cast<int>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const int missing = static_cast<int>(names.size());
  if (at("tp") == missing || at("dp") == missing || at("pp") == missing) {
    why = "it must name tp, dp and pp (cp and ep may be left out: they fold inside dp)";
    return std::nullopt;
  }
  if (at("tp") != 0) {
    why =
        "tp must come first: stepcast numbers the tensor-parallel ranks of a group consecutively, as "
        "Megatron-Core and torchtitan do";
    return std::nullopt;
  }
  if ((at("cp") != missing && at("cp") > at("dp")) || (at("ep") != missing && at("ep") > at("dp"))) {
    why = "cp and ep must come before dp: their groups fold inside the data-parallel replicas";
    return std::nullopt;
  }
  if (at("pp") > at("dp")) return RankOrder::kStagesOutermost;
  const bool inside_cp = at("cp") == missing || at("pp") < at("cp");
  const bool inside_ep = at("ep") == missing || at("pp") < at("ep");
  if (!inside_cp || !inside_ep) {
    why = "pp goes outermost (tp-cp-ep-dp-pp) or right after tp (tp-pp-cp-ep-dp): stepcast lays out no other";
    return std::nullopt;
  }
  return RankOrder::kStagesInsideReplicas;
}

}  // namespace stepcast::plan
