// The --interval-runs option of predict and simulate; the interval itself is
// report::interval_for (stepcast/report/step_interval.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include "stepcast/report/step_interval.hpp"

namespace stepcast::cli {

using report::IntervalOptions;

/// Adds --interval-runs.
void add_interval_options(CLI::App& command, IntervalOptions& options);

}  // namespace stepcast::cli
