// The compact text form of a plan: "dp=8,tp=2,pp=4,zero=1,recompute=selective" or "fsdp=8".
#include <fmt/format.h>

#include "plan_builder.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/text.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

Plan parse_plan(std::string_view text, const std::string& origin) {
  const KeyFailure fail = [&origin](const std::string& message) { throw InputError(origin, {}, message); };
  PlanBuilder builder;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string_view item =
        trim(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (item.empty()) {
      fail(fmt::format("empty setting in plan \"{}\" (expected key=value pairs separated by commas, as dp=8,tp=2)",
                       text));
    }
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) fail(fmt::format("\"{}\" is not key=value (as tp=2)", item));
    builder.set(trim(item.substr(0, eq)), trim(item.substr(eq + 1)), fail);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return builder.finish(fail);
}

}  // namespace stepcast::plan
