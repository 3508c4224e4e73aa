// Budgets before work: a command estimates what its request will cost (planner/work_estimate.hpp)
// and refuses, within a second and before doing it, a request beyond the budget, saying what it
// would cost and how to ask for less; --time-budget and --memory-budget raise the budget.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "stepcast/planner/work_estimate.hpp"

namespace stepcast::cli {

/// The most a command sets out to do without being asked: 10 minutes of CPU time and 4 GiB of
/// memory by default, as the options give them ("2 h", "16 GiB").
struct Budget {
  std::string time = "10 min";
  std::string memory = "4 GiB";
};

/// Adds --time-budget and --memory-budget to `command`.
void add_budget_options(CLI::App& command, Budget& budget);

/// Throws InputError when `work` exceeds `budget`: "<what> would take about 3 h of CPU time and
/// 12 GiB of memory, beyond the budget of 10 min and 4 GiB: <lower>, or raise the budget with
/// --time-budget / --memory-budget".
void check_budget(const planner::WorkEstimate& work, const Budget& budget, std::string_view what,
                  std::string_view lower);

/// "45 s", "12.5 min", "3.2 h", "41 days": a duration as a person reads it.
std::string describe_duration(Seconds t);

}  // namespace stepcast::cli
