// The Chrome trace-event format (JSON, "X" complete events; Perfetto and chrome://tracing open
// it): one track per simulated GPU stream, link tier and rank's pipeline sends.
#pragma once

#include <string>

#include "stepcast/sim/step_sim.hpp"

namespace stepcast::sim {

/// The trace of a step run with record_trace, as Chrome trace-event JSON (times in microseconds,
/// as the format requires). Deterministic: events in the order the run recorded them.
std::string chrome_trace_json(const StepResult& result);

}  // namespace stepcast::sim
