// `stepcast simulate`: one training step of a plan run on the discrete-event engine, beside the
// analytical figure (exit 3 when the plan does not fit).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "stepcast/planner/work_estimate.hpp"
#include "stepcast/report/command_output.hpp"
#include "stepcast/report/plan_inputs.hpp"
#include "stepcast/report/step_interval.hpp"

namespace stepcast::report {

struct SimulateRequest {
  PlanOptions plan;
  IntervalOptions interval;
  std::uint64_t seed = 1;
  int seeds = 1;  ///< simulate seeds seed .. seed + seeds - 1 and summarize the step time over them
  std::string straggler;
  std::string trace;
  bool json = false;
  /// Every call takes the analytical engine's price on links of its own (no contention).
  bool no_contention = false;
  /// Compare, node by node, what each engine exposes.
  bool explain = false;
  /// Write the step graph as Chakra execution traces, one per GPU, into this folder.
  std::string chakra;
  /// Approves the simulations the request asks for before the first runs; none: whatever they cost.
  WorkApproval approve_work;
};

/// The simulated step beside the analytical one (and the trace file when asked); a refusal when
/// the plan does not fit in GPU memory.
/// With seeds > 1 each seed is one unit run by `run_units` (the table and trace are the first
/// seed's); a process whose run_units returns nothing (a non-writing MPI rank) gets no output.
CommandOutput simulate_command(const SimulateRequest& request, const UnitRunner& run_units = run_here);

}  // namespace stepcast::report
