// `stepcast validate --runs`: measured training runs against the analytical model (as predict) or
// the event engine (as simulate). The command line and the Python module both call
// validate_runs_command.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/calibrate/training_runs.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/report/command_output.hpp"
#include "stepcast/report/progress.hpp"
#include "stepcast/report/validate_command.hpp"

namespace stepcast::report {

struct ValidateRunsRequest {
  std::vector<std::string> files;     ///< runs files, CSV or JSON
  std::string engine = "analytical";  ///< or "des"
  std::string calibration;
  bool json = false;
  std::string plot;  ///< also write the step-time scatter plot (SVG) here
  double max_median_error = 0.0;
  /// Approves the simulations of --engine des before any runs; none: whatever they cost.
  WorkApproval approve_work;
};

/// Every compared run's prediction by `engine`, computed somewhere other than this process alone
/// (the cli deals the runs over MPI ranks; `des` says the engine simulates), advancing `progress`
/// per run: one per run (inexpressible ones left default), or nothing on a process that writes no
/// output.
using SharedPredictions = std::function<std::optional<std::vector<calibrate::EnginePrediction>>(
    const std::vector<calibrate::TrainingRun>& runs, const calibrate::RunEngine& engine, bool des,
    const cost::Calibration* calibration, Progress& progress)>;

/// The comparison as text (or JSON), the plot when asked, and whether every figure's median
/// |error| is at or under max_median_error. A process whose shared_predictions returns nothing
/// gets empty text. Bad input throws InputError.
ValidateOutput validate_runs_command(const ValidateRunsRequest& request,
                                     const SharedPredictions& shared_predictions = {});

}  // namespace stepcast::report
