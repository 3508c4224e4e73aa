// Fitting the model's free parameters (topology/model_parameters.hpp) on measured training runs of
// any GPUs and frameworks: the fit that writes the shipped defaults (scripts/fit-defaults) and the
// leave-one-source-out fits of the accuracy report.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "stepcast/calibrate/training_runs.hpp"
#include "stepcast/cost/calibration.hpp"

namespace stepcast::calibrate {

/// One fitted parameter: its value, where it started, and the runs that bear on it.
struct FittedParameter {
  std::string name;
  double start = 0.0;  ///< SI units: the value the fit started from (the base calibration's or shipped)
  double value = 0.0;
  std::size_t runs = 0;   ///< fit runs whose prediction depends on it; 0: not fitted, start kept
  bool at_bound = false;  ///< the fit rests within 0.1% of the parameter's range of a bound
  bool measured = false;  ///< held at the base calibration's measured value, not fitted
};

struct DefaultsFit {
  std::vector<FittedParameter> parameters;  ///< in the build's order
  cost::CalibratedParameters fitted;        ///< the values, each with what it was fitted on
  std::map<std::string, std::size_t> runs_per_file;
  double rms_before = 0.0;  ///< weighted root mean square of log(predicted / measured) throughput
  double rms_after = 0.0;
  int iterations = 0;
};

/// Fits every free parameter of the build on the expressible runs with a measured throughput
/// (Levenberg-Marquardt on log(predicted / measured) throughput, each parameter kept inside its
/// bounds by a logistic map). Each runs file weighs the same in the fit (its runs by 1 / its
/// count), so a large source does not drown a small one. A parameter no run's prediction depends
/// on keeps its start value and says so. Starts from `base`'s parameters, else the shipped defaults.
/// InputError when fewer runs than parameters remain.
DefaultsFit fit_defaults(const std::vector<TrainingRun>& runs, const cost::Calibration& base);

/// The fit as a defaults file (topologies/model-defaults.json's form, which `--calibration` also
/// reads): source, fitted_on, and every parameter with its value and what it was fitted on.
std::string defaults_json_text(const DefaultsFit& fit);

}  // namespace stepcast::calibrate
