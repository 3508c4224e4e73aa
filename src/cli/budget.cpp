// The budget options and the refusal of a request beyond them.
#include "budget.hpp"

#include <fmt/format.h>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/units.hpp"

namespace stepcast::cli {
namespace {

template <class Q>
Q parse_budget(const std::string& text, std::string_view option) {
  Q q;
  try {
    q = parse_quantity<Q>(text);
  } catch (const UnitError& e) {
    throw InputError(std::string(option), {}, e.what());
  }
  if (!(q.value() > 0.0))
    throw InputError(std::string(option), {}, fmt::format("must be above zero, got \"{}\"", text));
  return q;
}

}  // namespace

std::string describe_duration(Seconds t) {
  constexpr double kMinute = 60.0;
  constexpr double kHour = 3600.0;
  constexpr double kDay = 86400.0;
  const double s = t.value();
  if (s < 2.0 * kMinute) return fmt::format("{:.3g} s", s);
  if (s < 2.0 * kHour) return fmt::format("{:.3g} min", s / kMinute);
  if (s < 2.0 * kDay) return fmt::format("{:.3g} h", s / kHour);
  return fmt::format("{:.3g} days", s / kDay);
}

void add_budget_options(CLI::App& command, Budget& budget) {
  command.add_option("--time-budget", budget.time,
                     "Refuse, before starting, work estimated to take more CPU time than this (default \"10 min\")");
  command.add_option("--memory-budget", budget.memory,
                     "Refuse, before starting, work estimated to need more memory than this (default \"4 GiB\")");
}

void check_budget(const planner::WorkEstimate& work, const Budget& budget, std::string_view what,
                  std::string_view lower) {
  const auto time = parse_budget<Seconds>(budget.time, "--time-budget");
  const auto memory = parse_budget<Bytes>(budget.memory, "--memory-budget");
  if (work.time.value() <= time.value() && work.memory.value() <= memory.value()) return;
  throw InputError(fmt::format(
      "{} would take about {} of CPU time and {} of memory, beyond the budget of {} and {}: {}, or raise the budget "
      "with --time-budget and --memory-budget",
      what, describe_duration(work.time), format_bytes(work.memory), describe_duration(time), format_bytes(memory),
      lower));
}

}  // namespace stepcast::cli
