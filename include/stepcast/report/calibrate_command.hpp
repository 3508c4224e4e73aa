// `stepcast calibrate`: the model's parameters fitted to measured collectives and kernels
// (--measured) or to measured training runs (--runs). The command line writes the calibration to
// its -o file; the Python module returns it. Both call these functions.
#pragma once

#include <string>
#include <vector>

#include "stepcast/report/measured_inputs.hpp"

namespace stepcast::report {

/// A fit's result: the calibration file's text and the report of what was fitted and how well.
struct CalibrateOutput {
  std::string calibration_json;
  std::string text;
};

/// Fits the tiers' alpha-beta figures and NCCL's tuning model to measured collectives, and the
/// compute model's GEMM and HBM efficiencies to kernel-bench operators. Bad input throws InputError.
CalibrateOutput calibrate_command(const MeasuredOptions& options);

struct CalibrateRunsRequest {
  std::vector<std::string> files;
  std::vector<std::string> fit = {"host-overhead", "kernel-overhead"};
  std::string fit_on = "every-other";
  std::string base;  ///< a calibration to start from (its other sections are kept)
};

/// Fits the chosen compute-model parameters to the runs `fit_on` selects, the rest held out and
/// reported. Bad input throws InputError.
CalibrateOutput calibrate_runs_command(const CalibrateRunsRequest& request);

}  // namespace stepcast::report
