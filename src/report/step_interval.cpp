// Deriving the step-time interval of predict and simulate from measured runs.
#include "stepcast/report/step_interval.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <map>
#include <string_view>

#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/calibrate/training_runs.hpp"
#include "stepcast/calibrate/validation.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/report/data_path.hpp"

namespace stepcast::report {

namespace {

/// The development corpus: each source the shipped defaults were fitted on, with the defaults
/// fitted on the other sources (scripts/fit-defaults --leave-one-out). A source's errors under the
/// fit that never saw it are what a cluster outside the corpus can expect (reports/accuracy.md's
/// left-out columns), so the shipped intervals come from them rather than from fit residuals.
struct DevelopmentSource {
  std::string_view runs;
  std::string_view fitted_without;
};
constexpr std::array<DevelopmentSource, 4> kShippedRuns = {{
    {"tests/data/runs/vtrain_single_node_a100.csv", "tests/data/loso/without-vtrain.json"},
    {"tests/data/runs/llm_foundry_mpt.csv", "tests/data/loso/without-llm-foundry.json"},
    {"tests/data/runs/megatron_bridge.csv", "tests/data/loso/without-megatron-bridge.json"},
    {"tests/data/runs/simumax_b200.csv", "tests/data/loso/without-simumax-b200.json"},
}};

/// The analytical model's errors on the runs files under `cal`; with neither (the shipped
/// intervals), each development source's errors under the defaults fitted without it.
calibrate::ResidualSet residuals_on(const std::vector<std::string>& runs_files, const cost::Calibration* cal) {
  const bool left_out = runs_files.empty() && !cal;
  std::vector<std::filesystem::path> files;
  std::map<std::string, cost::Calibration> fitted_without;  // runs file as read -> its left-out fit
  std::string names;
  const auto add = [&](std::string_view f) {
    files.push_back(data_path(std::string(f)));
    names += (names.empty() ? "" : ", ") + std::string(f);
  };
  if (runs_files.empty()) {
    for (const DevelopmentSource& source : kShippedRuns) {
      add(source.runs);
      if (left_out)
        fitted_without.emplace(files.back().string(),
                               cost::load_calibration(data_path(std::string(source.fitted_without))));
    }
  } else {
    for (const std::string& f : runs_files) add(f);
  }
  const auto runs = calibrate::read_training_runs(files, STEPCAST_SOURCE_DIR);
  const calibrate::RunValidation validation = calibrate::validate_runs(runs, [&](const calibrate::TrainingRun& r) {
    const auto fit = fitted_without.find(r.file);
    return calibrate::predict_analytically(r, fit != fitted_without.end() ? &fit->second : cal);
  });
  calibrate::ResidualSet residuals = calibrate::residuals_of(runs, validation);
  residuals.source = left_out ? names + "; each source's errors with it left out of the fit, tests/data/loso/" : names;
  return residuals;
}

}  // namespace

std::optional<calibrate::StepInterval> step_interval_for(const PlanInputs& in, Seconds step_time,
                                                         const IntervalOptions& o) {
  const calibrate::ResidualSet residuals = residuals_on(o.runs, in.calibration ? &*in.calibration : nullptr);
  return calibrate::step_interval(residuals, in.workload, in.plan, in.topology->gpu(), step_time);
}

calibrate::ResidualSet shipped_residuals(const cost::Calibration* calibration) { return residuals_on({}, calibration); }

std::optional<ErrorScatter> error_scatter_for(const calibrate::ResidualSet& residuals,
                                              const workload::Workload& workload, const plan::Plan& plan,
                                              const topology::GpuSpec& gpu) {
  ErrorScatter out;
  out.run_class = calibrate::run_class(workload, plan, gpu);
  const auto deviations = [](const auto& groups, const std::string& name) {
    const auto it = groups.find(name);
    return it == groups.end() ? std::vector<double>{} : calibrate::within_source_deviations(it->second);
  };
  std::vector<double> errors = deviations(residuals.by_class, out.run_class);
  if (errors.size() < calibrate::kMinIntervalRuns) {
    out.run_class = calibrate::gpu_generation(gpu);
    errors = deviations(residuals.by_generation, out.run_class);
  }
  if (errors.size() < calibrate::kMinIntervalRuns) return std::nullopt;
  const double centre = calibrate::percentile(errors, 50.0);
  for (double& e : errors) e = std::fabs(e - centre);
  out.relative = std::exp(calibrate::percentile(errors, 50.0)) - 1.0;
  out.runs = errors.size();
  return out;
}

IntervalResult interval_for(const PlanInputs& in, Seconds step_time, const IntervalOptions& options,
                            bool achieved_fraction_given) {
  IntervalResult out;
  if (achieved_fraction_given) {
    out.why_none = "no interval with --achieved-fraction: the measured errors are the operator model's";
    return out;
  }
  out.interval = step_interval_for(in, step_time, options);
  if (!out.interval) {
    out.why_none =
        fmt::format("no interval: fewer than {} measured runs like this plan ({}); give your own with --interval-runs",
                    calibrate::kMinIntervalRuns, calibrate::run_class(in.workload, in.plan, in.topology->gpu()));
  }
  return out;
}

std::string interval_text(const IntervalResult& result, Seconds step) {
  if (!result.interval) return result.why_none;
  const calibrate::StepInterval& i = *result.interval;
  std::string text =
      fmt::format("{:.0f}% interval {} - {} (median {}), from {}", i.coverage * 100.0, format_seconds(i.low),
                  format_seconds(i.high), format_seconds(i.median), i.derived_from);
  // A step outside its own interval: the model errs one way on runs like this plan, and the
  // median is the better guess; said where it is read, not left to the reader's arithmetic.
  if (step < i.low || step > i.high) {
    text += fmt::format(
        "\n  the step above lies {} this interval: on measured runs like this plan the model ran {} than they "
        "did; expect about the median, {}",
        step < i.low ? "below" : "above", step < i.low ? "faster" : "slower", format_seconds(i.median));
  }
  return text;
}

void add_interval_json(nlohmann::json& j, const IntervalResult& result) {
  if (!result.interval) {
    j["step_time_interval_s"] = nullptr;
    j["step_time_interval_note"] = result.why_none;
    return;
  }
  const calibrate::StepInterval& i = *result.interval;
  j["step_time_interval_s"] = {{"low_s", i.low.value()},
                               {"high_s", i.high.value()},
                               {"median_s", i.median.value()},
                               {"coverage", i.coverage},
                               {"run_class", i.run_class},
                               {"runs", i.runs},
                               {"sources", i.sources},
                               {"between_source_spread", i.between_source},
                               {"between_source_dof", i.between_source_dof},
                               {"derived_from", i.derived_from}};
}

}  // namespace stepcast::report
