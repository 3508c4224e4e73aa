// Private: reading order= (rank_order.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

/// The numbering an order string names; none, with `why` set, when it names none stepcast lays out.
std::optional<RankOrder> parse_rank_order(std::string_view text, std::string& why);

}  // namespace stepcast::plan
