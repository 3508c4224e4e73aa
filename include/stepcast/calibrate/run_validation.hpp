// Predicted against measured for training runs: each run's signed error per measured figure, the
// median, mean, p90 and worst absolute error per figure and per group, and how well the model
// orders the plans of a group (Spearman's rank correlation of throughput).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/calibrate/training_runs.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/cost/memory.hpp"

namespace stepcast::calibrate {

/// A figure a run may have measured.
enum class RunMetric {
  kStepTime,
  kTokensPerS,
  kTokensPerSPerGpu,
  kModelFlopsPerGpu,
  kHardwareFlopsPerGpu,
  kMfu,
  kHfu,
  kPeakMemory,
};
inline constexpr RunMetric kRunMetrics[] = {RunMetric::kStepTime,
                                            RunMetric::kTokensPerS,
                                            RunMetric::kTokensPerSPerGpu,
                                            RunMetric::kModelFlopsPerGpu,
                                            RunMetric::kHardwareFlopsPerGpu,
                                            RunMetric::kMfu,
                                            RunMetric::kHfu,
                                            RunMetric::kPeakMemory};

/// "step time", "tokens/s", ..., "peak memory/GPU": the words of the tables.
std::string_view to_string(RunMetric metric);
/// The key with its unit, as the JSON output names it: "step_time_s", "tokens_per_s", ...
std::string_view json_key(RunMetric metric);

/// What an engine predicted for one run.
struct EnginePrediction {
  Seconds step_time;
  Bytes memory;         ///< peak per GPU: `stepcast memory`'s total
  cost::MemoryFit fit;  ///< against the topology's GPU memory
  /// The part of `memory` PyTorch's caching allocator holds, what a measured peak
  /// (torch.cuda.max_memory_allocated()) counts: the total less the framework overhead.
  Bytes allocated;
};

/// Predicts one expressible run.
using RunEngine = std::function<EnginePrediction(const TrainingRun&)>;

/// The analytical engine: exactly what `stepcast predict` computes for the run's workload, plan
/// and topology (graph::predict_step with its default memory options and `calibration`, which
/// may be null).
EnginePrediction predict_analytically(const TrainingRun& run, const cost::Calibration* calibration);

/// One measured figure against its prediction; error_pct = (predicted - measured) / measured x 100.
struct MetricError {
  RunMetric metric = RunMetric::kStepTime;
  double measured = 0.0;  ///< SI units (s, tokens/s, FLOP/s, fraction, bytes)
  double predicted = 0.0;
  double error_pct = 0.0;
};

struct ComparedRun {
  std::size_t index = 0;  ///< into the runs given to validate_runs
  std::string
      inexpressible;  ///< why the model cannot express the run (TrainingRun::inexpressible); empty when compared
  EnginePrediction prediction;
  std::vector<MetricError> errors;  ///< in kRunMetrics order, the figures the run measured
  std::optional<double> measured_tokens_per_s;
  std::optional<double> predicted_tokens_per_s;

  [[nodiscard]] bool compared() const { return inexpressible.empty(); }
};

/// Absolute errors of one figure over a set of runs (percent).
struct MetricSummary {
  RunMetric metric = RunMetric::kStepTime;
  std::size_t runs = 0;
  double median_abs_error_pct = 0.0;
  double mean_abs_error_pct = 0.0;
  double p90_abs_error_pct = 0.0;
  double max_abs_error_pct = 0.0;
};

/// Median (the mean of the middle two for an even count), mean, nearest-rank p90 and worst.
MetricSummary summarise(RunMetric metric, const std::vector<double>& abs_errors_pct);

struct GroupResult {
  std::string group;
  std::size_t runs = 0;                ///< compared runs of the group
  std::vector<MetricSummary> metrics;  ///< the figures its runs measured
  std::optional<double> spearman;  ///< of measured vs predicted throughput; none below 3 runs or with all ranks tied
  /// The same over the group's distinct plans: runs of one workload and resolved plan (the same
  /// plan measured in several software releases, say) count once, at their mean measured
  /// throughput, since the model predicts them alike and cannot order them; none below 3 plans.
  std::size_t plans = 0;
  std::optional<double> plan_spearman;
};

struct RunValidation {
  std::vector<ComparedRun> runs;          ///< one per run, in file order
  std::vector<MetricSummary> metrics;     ///< over every compared run, figures measured at least once
  std::vector<GroupResult> groups;        ///< in order of first appearance
  std::optional<double> median_spearman;  ///< over the groups that have one
  std::size_t ranked_groups = 0;
  std::optional<double> median_plan_spearman;  ///< over the groups with a plan_spearman
  std::size_t plan_ranked_groups = 0;
  std::size_t inexpressible = 0;
  std::size_t not_fitting = 0;  ///< compared runs the memory model says do not fit (they ran, so it erred)
};

/// Compares every run: inexpressible ones are kept with their reason and counted, never dropped.
/// Throughput-derived figures are predicted from the predicted step time: tokens/s = tokens per
/// step / step time; FLOP/s, MFU and HFU = measured x predicted / measured throughput, so they
/// keep the run's own FLOP convention. `progress` is called after each run.
RunValidation validate_runs(const std::vector<TrainingRun>& runs, const RunEngine& engine,
                            const std::function<void()>& progress = {});

/// Spearman's rank correlation: Pearson's correlation of the ranks, tied values sharing their
/// average rank. None with fewer than 3 pairs or when one side is constant.
std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace stepcast::calibrate
