// The output of `stepcast validate --runs`: predicted against measured training runs as a text
// table, one JSON object, or a step-time scatter plot; each a pure function of the comparison.
#pragma once

#include <string>
#include <vector>

#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/calibrate/training_runs.hpp"

namespace stepcast::report {

/// What a run-validation report says about how it was made.
struct RunReportContext {
  std::vector<std::string> files;  ///< the runs files, as given
  std::string engine;              ///< "analytical" or "des"
  std::string calibration;         ///< the calibration file; empty when uncalibrated
};

/// Every run (its figures measured, predicted and the signed error; or why it was not
/// predicted), then the absolute-error summary per figure, peak memory apart, and per group
/// with the group's Spearman correlation and the median over groups.
std::string run_validation_text(const std::vector<calibrate::TrainingRun>& runs, const calibrate::RunValidation& result,
                                const RunReportContext& context);

/// The same as one JSON object (SI units; keys carry them: step_time_s, peak_memory_per_gpu_bytes).
std::string run_validation_json(const std::vector<calibrate::TrainingRun>& runs, const calibrate::RunValidation& result,
                                const RunReportContext& context);

/// Predicted against measured step time of every compared run with a throughput, one colour per
/// group, on log axes with y = x and +-10% lines. A run that measured tokens/s rather than step
/// time is drawn at tokens per step / tokens/s.
std::string run_validation_svg(const std::vector<calibrate::TrainingRun>& runs, const calibrate::RunValidation& result,
                               const RunReportContext& context);

}  // namespace stepcast::report
