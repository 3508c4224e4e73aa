// What a command makes: its text (table or JSON), the files it writes beside it (a trace), and,
// when the plan does not fit in GPU memory, the refusal the command raises after the text is
// written (exit 3, STYLE.md A3).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/output_file.hpp"
#include "stepcast/planner/work_estimate.hpp"

namespace stepcast::report {

struct CommandOutput {
  std::string text;
  std::vector<OutputContent> files;  ///< written with the text, all or none (cli/output.hpp)
  std::optional<InfeasibleError> refusal;
  /// Writes the command's files (the ones above and the text's) together with what it exports
  /// beside them (simulate --chakra's traces) in one commit; unset: the files alone.
  std::function<void(const std::vector<OutputContent>& files)> write_with;
};

/// How a command runs its independent units: work(i) for each, given each unit's expected cost,
/// returning every unit's bytes in unit order, or nothing on a process that does not write the
/// output (the cli deals them over MPI ranks; run_here runs them all in this process).
using UnitRunner = std::function<std::vector<std::string>(const std::vector<double>& costs,
                                                          const std::function<std::string(std::size_t)>& work)>;

/// Called with the estimated cost of work a command is about to start, what that work is, and how to
/// ask for less, before any of it runs; may refuse it by throwing InputError (the cli's budget).
using WorkApproval =
    std::function<void(const planner::WorkEstimate& work, std::string_view what, std::string_view lower)>;

/// Every unit in this process, in order.
std::vector<std::string> run_here(const std::vector<double>& costs,
                                  const std::function<std::string(std::size_t)>& work);

}  // namespace stepcast::report
