// `stepcast calibrate --runs FILE...`: the compute model's kernel parameters fitted to measured
// training runs. Its options sit on the calibrate command beside --measured (cmd_calibrate.cpp
// hooks them).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "stepcast/report/calibrate_command.hpp"

namespace stepcast::cli {

using CalibrateRunsOptions = report::CalibrateRunsRequest;

/// Adds --runs, --fit, --fit-on and --base to `calibrate`; --runs excludes the nccl-tests options.
/// Returns the --runs option, so the caller can tell which mode was asked for.
CLI::Option* add_calibrate_runs_options(CLI::App& calibrate, CalibrateRunsOptions& options);

/// Fits, writes the calibration to `output` and prints the report.
void run_calibrate_runs(const CalibrateRunsOptions& options, const std::string& output);

}  // namespace stepcast::cli
