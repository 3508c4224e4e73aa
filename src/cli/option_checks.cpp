#include "option_checks.hpp"

#include <fmt/format.h>
#include <cmath>
#include <string>

namespace stepcast::cli {
namespace {

CLI::Validator number_check(bool zero_allowed) {
  const std::string rule = zero_allowed ? "a number >= 0" : "a number > 0";
  return CLI::Validator(
      [zero_allowed, rule](std::string& text) -> std::string {
        double value = 0.0;
        if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value))
          return fmt::format("must be {}, got \"{}\"", rule, text);
        if (value < 0.0 || (value == 0.0 && !zero_allowed)) return fmt::format("must be {}, got {}", rule, text);
        return {};
      },
      zero_allowed ? "NUMBER >= 0" : "NUMBER > 0");
}

}  // namespace

CLI::Validator positive_number() { return number_check(false); }

CLI::Validator non_negative_number() { return number_check(true); }

}  // namespace stepcast::cli
