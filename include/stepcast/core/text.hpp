// Small text helpers shared by the readers of plans, units, runs files and storage specs.
#pragma once

#include <string_view>

namespace stepcast {

/// `text` without leading and trailing spaces and tabs.
std::string_view trim(std::string_view text);

}  // namespace stepcast
