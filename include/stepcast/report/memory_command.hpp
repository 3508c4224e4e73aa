// `stepcast memory`: the memory per GPU of a plan, every term separate (STYLE.md A3: exit 3 when a
// topology is given and the plan does not fit).
#pragma once

#include "stepcast/report/command_output.hpp"
#include "stepcast/report/plan_inputs.hpp"

namespace stepcast::report {

struct MemoryRequest {
  PlanOptions plan;
  bool json = false;
  bool explain = false;
};

/// The memory table (or JSON) of the plan; a refusal when it does not fit the topology's GPU.
CommandOutput memory_command(const MemoryRequest& request);

}  // namespace stepcast::report
