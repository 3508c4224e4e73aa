// An honest interval around a predicted step time: the spread of the model's errors on measured
// runs like the one predicted (same GPU generation and plan family), read from runs files.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/core/units.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::calibrate {

/// The class whose measured errors stand for a plan's: its GPU's generation and its plan family,
/// "Ampere, dense 3D" (TP/PP/CP/DP, ZeRO-1/2), "Hopper, FSDP/ZeRO-3" or "Hopper, expert-parallel".
std::string run_class(const plan::Plan& plan, const topology::GpuSpec& gpu);

/// The GPU's generation as run classes name it ("Hopper"); its name where its file states none.
std::string gpu_generation(const topology::GpuSpec& gpu);

/// The model's errors on measured runs, log(predicted / measured step time), by run class.
struct ResidualSet {
  std::map<std::string, std::vector<double>> by_class;  ///< each sorted
  /// Every run of a GPU generation once (gpu_generation), each sorted.
  std::map<std::string, std::vector<double>> by_generation;
  std::string source;  ///< the runs files they come from
};

/// The residuals of the compared runs of `validation` (made from `runs`) that measured
/// throughput; `use`, when given, picks which (by index into runs).
ResidualSet residuals_of(const std::vector<TrainingRun>& runs, const RunValidation& validation,
                         const std::vector<bool>* use = nullptr);

/// A predicted step time's interval and what it comes from.
struct StepInterval {
  Seconds low;
  Seconds high;
  /// The step the comparable runs' median error gives (p / exp(median r)): where the point
  /// prediction lies outside [low, high], the model errs one way on runs like this plan.
  Seconds median;
  double coverage = 0.9;  ///< the share of comparable runs' errors it spans
  std::string run_class;  ///< the class whose errors were used
  std::size_t runs = 0;
  std::string derived_from;  ///< one sentence: runs, class, source
};

/// Classes with fewer comparable runs than this give no interval.
inline constexpr std::size_t kMinIntervalRuns = 10;

/// The central `coverage` share of the errors of the plan's class (run_class), turned into bounds
/// on the step time: a run the model predicts p with error r took p / exp(r). None without
/// kMinIntervalRuns runs of the class.
std::optional<StepInterval> step_interval(const ResidualSet& residuals, const plan::Plan& plan,
                                          const topology::GpuSpec& gpu, Seconds predicted, double coverage = 0.9);

/// How often the interval held: derived from every other compared run (the 1st, 3rd, ...), checked
/// on the others, per class and overall.
struct IntervalCoverage {
  struct Line {
    std::string run_class;
    std::size_t checked = 0;
    std::size_t inside = 0;
    std::size_t without_interval = 0;  ///< checked runs whose class had too few derivation runs
  };
  std::vector<Line> classes;
  Line overall;
};

IntervalCoverage interval_coverage(const std::vector<TrainingRun>& runs, const RunValidation& validation,
                                   double coverage = 0.9);

}  // namespace stepcast::calibrate
