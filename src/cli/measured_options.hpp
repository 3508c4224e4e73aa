// The options `calibrate` and `validate` share (--measured, --topology, --nodes, --algorithm,
// --min-size, --max-size, --holdout, and --op, --ranks, --gpus-per-node, --verbose for logs that
// do not say everything), and loading them into measurements, topology and filter.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "stepcast/report/measured_inputs.hpp"

namespace stepcast::cli {

using report::MeasuredInputs;
using report::MeasuredOptions;

/// Adds the shared options; `verb` ("Fit", "Compare") and `holdout_help` word the help texts.
void add_measured_options(CLI::App& command, MeasuredOptions& options, const std::string& verb,
                          const std::string& holdout_help);

}  // namespace stepcast::cli
