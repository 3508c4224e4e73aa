// `stepcast calibrate --runs`: reads measured training runs, fits the chosen kernel parameters on
// the runs fit_on selects, and reports the error before and after on those runs (a fit residual)
// and on the held-out runs of the same GPU (an accuracy).
#include "stepcast/report/calibrate_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>

#include "stepcast/calibrate/defaults_fit.hpp"
#include "stepcast/calibrate/runs_fit.hpp"
#include "stepcast/calibrate/training_runs.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/topology/model_parameters.hpp"

namespace stepcast::report {

namespace {

std::string errors_line(const char* label, const calibrate::RunErrors& before, const calibrate::RunErrors& after) {
  if (before.runs == 0) return fmt::format("  {:<28} no runs\n", label);
  return fmt::format(
      "  {:<28} {:>5} runs   median |error| {:6.2f}% -> {:6.2f}%   mean {:6.2f}% -> {:6.2f}%   worst {:6.2f}% -> "
      "{:6.2f}%\n",
      label, before.runs, before.median_abs_error_pct, after.median_abs_error_pct, before.mean_abs_error_pct,
      after.mean_abs_error_pct, before.max_abs_error_pct, after.max_abs_error_pct);
}

// --fit defaults: every free parameter of the model on every run, as a defaults file.
CalibrateOutput fit_defaults_to_runs(const std::vector<std::filesystem::path>& files, const CalibrateRunsRequest& o) {
  if (!o.fit_on.empty() && o.fit_on != "every-other") {
    throw InputError("--fit-on", {},
                     "--fit defaults fits on every run of the files given (leave a source out by not giving it)");
  }
  const std::vector<calibrate::TrainingRun> runs = calibrate::read_training_runs(files, STEPCAST_SOURCE_DIR);
  const cost::Calibration base = o.base.empty() ? cost::Calibration{} : cost::load_calibration(o.base);
  const calibrate::DefaultsFit fit = calibrate::fit_defaults(runs, base);
  CalibrateOutput out;
  out.calibration_json = calibrate::defaults_json_text(fit);
  out.text = fmt::format(
      "fitted the model's free parameters in {} iterations; weighted rms of log throughput {:.4f} -> {:.4f}\n",
      fit.iterations, fit.rms_before, fit.rms_after);
  for (const calibrate::FittedParameter& p : fit.parameters) {
    const topology::ParameterSpec& s = *topology::find_parameter(p.name);
    out.text += fmt::format("  {:<28} {:>12} -> {:>12}  ({}){}\n", p.name, topology::format_parameter(s, p.start),
                            topology::format_parameter(s, p.value),
                            p.measured ? std::string("measured, not fitted")
                            : p.runs   ? fmt::format("{} runs", p.runs)
                                       : std::string("not fitted: no run depends on it"),
                            p.at_bound ? ", at a bound" : "");
  }
  for (const auto& [file, n] : fit.runs_per_file) out.text += fmt::format("  fitted on {}: {} runs\n", file, n);
  return out;
}

}  // namespace

CalibrateOutput calibrate_runs_command(const CalibrateRunsRequest& o) {
  std::vector<std::filesystem::path> files;
  std::string origin;
  for (const auto& f : o.files) {
    files.emplace_back(f);
    origin += (origin.empty() ? "" : ", ") + f;
  }
  if (o.fit.size() == 1 && o.fit.front() == "defaults") return fit_defaults_to_runs(files, o);
  std::vector<calibrate::ComputeParameter> parameters;
  for (const std::string& name : o.fit) {
    const auto p = calibrate::parse_compute_parameter(name);
    if (!p)
      throw InputError(
          "--fit", {},
          fmt::format("unknown parameter \"{}\"; accepted: {}", name, calibrate::accepted_compute_parameters()));
    if (std::find(parameters.begin(), parameters.end(), *p) != parameters.end()) {
      throw InputError("--fit", {}, fmt::format("\"{}\" given twice", name));
    }
    parameters.push_back(*p);
  }
  const calibrate::RunSplit split = calibrate::parse_run_split(o.fit_on, "--fit-on");
  const std::vector<calibrate::TrainingRun> runs = calibrate::read_training_runs(files, STEPCAST_SOURCE_DIR);
  cost::Calibration cal = o.base.empty() ? cost::Calibration{} : cost::load_calibration(o.base);
  const calibrate::RunsFit fit = calibrate::fit_compute_to_runs(runs, calibrate::fit_mask(runs, split), parameters, cal,
                                                                fmt::format("{} ({})", origin, o.fit_on));
  cal.compute = fit.compute;
  if (cal.source.empty()) cal.source = fit.compute.source;

  std::string report =
      fmt::format("fitted {} on {} runs of {} ({}, --fit-on {}) in {} iterations\n", fmt::join(o.fit, ", "),
                  fit.fit_after.runs, fit.gpu, origin, o.fit_on, fit.iterations);
  const cost::ComputeCalibration& c = fit.compute;
  for (const calibrate::ComputeParameter p : parameters) {
    switch (p) {
      case calibrate::ComputeParameter::kHostOverhead:
        report += fmt::format("  host overhead      {}\n", format_seconds(*c.host_overhead));
        break;
      case calibrate::ComputeParameter::kKernelOverhead:
        report += fmt::format("  kernel overhead    {}\n", format_seconds(*c.kernel_overhead));
        break;
      case calibrate::ComputeParameter::kMemoryEfficiency:
        report += fmt::format("  memory efficiency  {:.4f}\n", *c.memory_efficiency);
        break;
      case calibrate::ComputeParameter::kGemmEfficiency:
        for (const auto& [precision, v] : c.gemm_efficiency)
          report += fmt::format("  GEMM efficiency    {:.4f} ({})\n", v, precision);
        break;
      case calibrate::ComputeParameter::kAttentionEfficiency:
        report += fmt::format("  attention          {:.4f} forward, {:.4f} backward\n", *c.attention_forward_efficiency,
                              *c.attention_backward_efficiency);
        break;
    }
  }
  report += "throughput error, before -> after the fit:\n";
  report += errors_line("fitted runs (fit residual)", fit.fit_before, fit.fit_after);
  report += errors_line("held-out runs (accuracy)", fit.held_before, fit.held_after);
  return {cost::to_json_text(cal), report};
}

}  // namespace stepcast::report
