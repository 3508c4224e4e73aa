// The one-line warning every command prints when a calibration is applied outside the range of
// sizes, rank counts and node counts it was fitted on.
#pragma once

#include <string>
#include <vector>

#include "stepcast/cost/calibration.hpp"
#include "stepcast/graph/predict.hpp"

namespace stepcast::report {

/// Prints "stepcast: warning: ..." to stderr naming `what` (collectives priced outside the fitted
/// range) when there is any; nothing without a calibration, a recorded range or such collectives.
void warn_outside_calibration(const cost::Calibration* calibration, const std::string& file,
                              const std::vector<std::string>& what);

/// The collectives of a predicted step that lie outside the calibration's range, by name.
std::vector<std::string> outside_calibration(const graph::StepPrediction& prediction);

}  // namespace stepcast::report
