// `stepcast predict`: step time, tokens/s, MFU and memory per GPU of a plan on a topology, with the
// step time's interval from measured runs (exit 3 when the plan does not fit).
#pragma once

#include <string>

#include "stepcast/report/command_output.hpp"
#include "stepcast/report/plan_inputs.hpp"
#include "stepcast/report/step_interval.hpp"

namespace stepcast::report {

struct PredictRequest {
  PlanOptions plan;
  IntervalOptions interval;
  double achieved_fraction = 0.0;
  bool json = false;
  bool explain = false;
};

/// The prediction as a table (or JSON); a refusal when the plan does not fit in GPU memory.
CommandOutput predict_command(const PredictRequest& request);

}  // namespace stepcast::report
