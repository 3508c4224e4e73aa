// The command-line options every plan-based command shares (--workload, --topology, --nodes,
// --plan, --global-batch, --seq, --precision, --optimizer, --overhead, --calibration); loading
// them is report::load_plan_inputs.
#pragma once

#include <CLI/CLI.hpp>

#include "stepcast/report/plan_inputs.hpp"

namespace stepcast::cli {

using report::PlanInputs;
using report::PlanOptions;

/// Adds the shared options to `command`; --topology is required when `need_topology`.
void add_plan_options(CLI::App& command, PlanOptions& options, bool need_topology);

}  // namespace stepcast::cli
