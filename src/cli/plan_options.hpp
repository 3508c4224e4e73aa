// The command-line options every plan-based command shares (--workload, --topology, --nodes,
// --plan, --global-batch, --seq, --precision, --optimizer, --overhead, --calibration, and the
// what-if options --gpus, --set, --memory-margin); loading
// them is report::load_plan_inputs.
#pragma once

#include <CLI/CLI.hpp>

#include "stepcast/report/plan_inputs.hpp"

namespace stepcast::cli {

using report::PlanInputs;
using report::PlanOptions;

/// Adds the shared options to `command`; --topology is required when `need_topology`;
/// --memory-margin only where the command gives a memory verdict (`checks_memory`).
void add_plan_options(CLI::App& command, PlanOptions& options, bool need_topology, bool checks_memory = true);

}  // namespace stepcast::cli
