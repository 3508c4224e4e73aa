// `stepcast simulate`: one training step of a plan run on the discrete-event engine, beside the
// analytical figure (exit 3 when the plan does not fit).
#pragma once

#include <cstdint>
#include <string>

#include "stepcast/report/command_output.hpp"
#include "stepcast/report/plan_inputs.hpp"
#include "stepcast/report/step_interval.hpp"

namespace stepcast::report {

struct SimulateRequest {
  PlanOptions plan;
  IntervalOptions interval;
  std::uint64_t seed = 1;
  std::string straggler;
  std::string trace;
  bool json = false;
};

/// The simulated step beside the analytical one (and the trace file when asked); a refusal when
/// the plan does not fit in GPU memory.
CommandOutput simulate_command(const SimulateRequest& request);

}  // namespace stepcast::report
