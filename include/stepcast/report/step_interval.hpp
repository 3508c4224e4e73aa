// The interval predict and simulate print around a step time: the model's errors on measured runs
// like the plan (calibrate/prediction_interval.hpp), from the shipped datasets or the user's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stepcast/calibrate/prediction_interval.hpp"
#include "stepcast/report/plan_inputs.hpp"

namespace stepcast::report {

/// The runs files an interval is derived from; empty: the shipped tests/data/runs datasets.
struct IntervalOptions {
  std::vector<std::string> runs;
};

/// The 90% interval around `step_time` for the plan of `in`, from the errors of the analytical
/// model (with `in`'s calibration) on the runs files; none when too few comparable runs.
std::optional<calibrate::StepInterval> step_interval_for(const PlanInputs& in, Seconds step_time,
                                                         const IntervalOptions& options);

/// How far the model's errors on measured runs like a plan scatter about their own source's
/// median (a cluster's offset is common to every plan ranked on it): two predictions closer than
/// this cannot be told apart by the model (search marks them as ties).
struct ErrorScatter {
  double relative = 0.0;  ///< exp(median |d - median d|) - 1 of the deviations d (within_source_deviations)
  std::size_t runs = 0;
  std::string run_class;  ///< the class (or GPU generation) whose runs were used
};

/// The model's errors on the shipped runs (with `calibration`, if any): what a search's ties and
/// its rows' intervals are read from, derived once per search.
calibrate::ResidualSet shipped_residuals(const cost::Calibration* calibration);

/// The scatter for `plan` on `gpu` in `residuals`: its run class's errors, or its GPU
/// generation's when the class has fewer than kMinIntervalRuns; none when the generation has
/// fewer too.
std::optional<ErrorScatter> error_scatter_for(const calibrate::ResidualSet& residuals,
                                              const workload::Workload& workload, const plan::Plan& plan,
                                              const topology::GpuSpec& gpu);

/// A step time's interval, or why there is none.
struct IntervalResult {
  std::optional<calibrate::StepInterval> interval;
  std::string why_none;
};

/// The interval for predict and simulate: none with an explicit achieved fraction (the measured
/// errors are the operator model's), else step_interval_for.
IntervalResult interval_for(const PlanInputs& in, Seconds step_time, const IntervalOptions& options,
                            bool achieved_fraction_given);

/// "90% interval 1.2-1.5 s, from the model's errors on N measured runs of CLASS (files)", or why there is none;
/// a second line where `step` lies outside it, pointing to the median.
std::string interval_text(const IntervalResult& result, Seconds step);

/// Sets "step_time_interval_s" ({low_s, high_s, coverage, run_class, runs, derived_from}, or null)
/// and, without one, "step_time_interval_note" in `j`.
void add_interval_json(nlohmann::json& j, const IntervalResult& result);

}  // namespace stepcast::report
