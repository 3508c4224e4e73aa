// `stepcast validate --runs FILE...`: measured training runs against the analytical model or the
// simulator. Its options sit on the validate command beside --measured (cmd_validate.cpp hooks them).
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "budget.hpp"

namespace stepcast::cli {

struct RunsOptions {
  std::vector<std::string> files;
  std::string engine = "analytical";
  Budget budget;  ///< --engine des: the simulations of every run
};

/// What validate's shared options say for the runs: calibration, output, plot and the gate.
struct RunsOutput {
  std::string calibration;
  bool json = false;
  std::string output;
  std::string plot;
  double max_median_error = 0.0;
  bool gate = false;
};

/// Adds --runs, --engine and the budget options to `validate`; --runs excludes the nccl-tests options.
/// Returns the --runs option, so the caller can tell which mode was asked for.
CLI::Option* add_runs_options(CLI::App& validate, RunsOptions& options);

/// Validates the runs and prints the report; returns whether the gate (--max-median-error:
/// every figure's median |error|) passed.
bool run_validate_runs(const RunsOptions& options, const RunsOutput& output);

}  // namespace stepcast::cli
