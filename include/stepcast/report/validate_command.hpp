// `stepcast validate` on collectives and kernels: predicted against measured for every point of
// nccl-tests logs or stepcast-nccl-bench JSON and every operator of stepcast-kernel-bench JSON.
#pragma once

#include <string>
#include <vector>

#include "stepcast/core/output_file.hpp"
#include "stepcast/report/measured_inputs.hpp"

namespace stepcast::report {

struct ValidateRequest {
  /// Collectives priced as every other command prices them: NCCL's tuning model picks the
  /// algorithm and protocol (an algorithm of stepcast's may be named to compare it instead).
  MeasuredOptions in = [] {
    MeasuredOptions m;
    m.algorithm = "auto";
    return m;
  }();
  std::string calibration;
  double max_median_error = 0.0;
  bool json = false;
  std::string plot;
};

struct ValidateOutput {
  std::string text;
  std::vector<OutputContent> files;  ///< the plot, written with the text
  bool within_gate = true;           ///< every median |error| at or under max_median_error
};

/// The comparison table (or JSON), and the plot file's content when asked.
ValidateOutput validate_command(const ValidateRequest& request);

}  // namespace stepcast::report
