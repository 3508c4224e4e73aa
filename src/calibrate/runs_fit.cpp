// calibrate --runs: the kernel parameters that make the compute model reproduce measured
// training throughput, by Levenberg-Marquardt (Eigen's MINPACK port) on log(predicted /
// measured), parameters mapped to unbounded coordinates (log for times, logit for efficiencies).
#include "stepcast/calibrate/runs_fit.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <unsupported/Eigen/LevenbergMarquardt>
#include <unsupported/Eigen/NumericalDiff>

#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/core/errors.hpp"

namespace stepcast::calibrate {

namespace {

constexpr std::array<ComputeParameter, 5> kParameters = {
    ComputeParameter::kHostOverhead, ComputeParameter::kKernelOverhead, ComputeParameter::kMemoryEfficiency,
    ComputeParameter::kGemmEfficiency, ComputeParameter::kAttentionEfficiency};

bool is_time(ComputeParameter p) {
  return p == ComputeParameter::kHostOverhead || p == ComputeParameter::kKernelOverhead;
}

/// Unbounded coordinates: log microseconds for overheads, logit for fractions in (0, 1).
double to_coordinate(ComputeParameter p, double value) {
  if (is_time(p)) return std::log(value * 1e6);
  return std::log(value / (1.0 - value));
}
double from_coordinate(ComputeParameter p, double x) {
  if (is_time(p)) return std::exp(x) / 1e6;
  return 1.0 / (1.0 + std::exp(-x));
}

double value_of(const cost::KernelParams& k, ComputeParameter p) {
  switch (p) {
    case ComputeParameter::kHostOverhead:
      return k.host_overhead.value();
    case ComputeParameter::kKernelOverhead:
      return k.kernel_overhead.value();
    case ComputeParameter::kMemoryEfficiency:
      return k.memory_efficiency;
    case ComputeParameter::kGemmEfficiency:
      return k.gemm_efficiency;
    case ComputeParameter::kAttentionEfficiency:
      return k.attention_forward_efficiency;
  }
  STEPCAST_UNREACHABLE("unknown parameter");
}

/// Writes one fitted value into the calibration's compute section. The attention efficiency
/// scales forward and backward together, keeping their published ratio.
void store(cost::ComputeCalibration& c, const cost::KernelParams& start, ComputeParameter p, double v,
           const std::string& precision) {
  switch (p) {
    case ComputeParameter::kHostOverhead:
      c.host_overhead = Seconds(v);
      break;
    case ComputeParameter::kKernelOverhead:
      c.kernel_overhead = Seconds(v);
      break;
    case ComputeParameter::kMemoryEfficiency:
      c.memory_efficiency = v;
      break;
    case ComputeParameter::kGemmEfficiency:
      c.gemm_efficiency[precision] = v;
      break;
    case ComputeParameter::kAttentionEfficiency:
      c.attention_forward_efficiency = v;
      c.attention_backward_efficiency =
          std::min(1.0, v * start.attention_backward_efficiency / start.attention_forward_efficiency);
      break;
  }
}

double log_ratio(const TrainingRun& run, const cost::Calibration& cal) {
  const EnginePrediction p = predict_analytically(run, &cal);
  const double predicted = run.tokens_per_step() / p.step_time.value();
  return std::log(predicted / *run.measured_tokens_per_s());
}

RunErrors errors_of(const std::vector<const TrainingRun*>& runs, const cost::Calibration& cal) {
  RunErrors out;
  std::vector<double> abs;
  for (const TrainingRun* r : runs) abs.push_back(std::fabs(std::expm1(log_ratio(*r, cal))) * 100.0);
  if (abs.empty()) return out;
  std::sort(abs.begin(), abs.end());
  out.runs = abs.size();
  const std::size_t n = abs.size();
  out.median_abs_error_pct = n % 2 ? abs[n / 2] : (abs[n / 2 - 1] + abs[n / 2]) / 2.0;
  double sum = 0.0;
  for (const double a : abs) sum += a;
  out.mean_abs_error_pct = sum / static_cast<double>(n);
  out.max_abs_error_pct = abs.back();
  return out;
}

/// The residuals log(predicted / measured) of the fit runs at coordinates x.
struct Residuals : Eigen::DenseFunctor<double> {
  Residuals(const std::vector<const TrainingRun*>& runs, const std::vector<ComputeParameter>& parameters,
            const cost::Calibration& base, const cost::KernelParams& start, const std::string& precision)
      : Eigen::DenseFunctor<double>(static_cast<int>(parameters.size()), static_cast<int>(runs.size())),
        runs_(&runs),
        parameters_(&parameters),
        base_(&base),
        start_(start),
        precision_(precision) {}

  [[nodiscard]] cost::Calibration at(const Eigen::VectorXd& x) const {
    cost::Calibration cal = *base_;
    if (!cal.compute) cal.compute = cost::ComputeCalibration{};
    for (std::size_t i = 0; i < parameters_->size(); ++i) {
      const ComputeParameter p = (*parameters_)[i];
      store(*cal.compute, start_, p, from_coordinate(p, x[static_cast<Eigen::Index>(i)]), precision_);
    }
    return cal;
  }

  int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& fvec) const {
    const cost::Calibration cal = at(x);
    for (std::size_t i = 0; i < runs_->size(); ++i) fvec[static_cast<Eigen::Index>(i)] = log_ratio(*(*runs_)[i], cal);
    return 0;
  }

  const std::vector<const TrainingRun*>* runs_;
  const std::vector<ComputeParameter>* parameters_;
  const cost::Calibration* base_;
  cost::KernelParams start_;
  std::string precision_;
};

}  // namespace

std::string_view to_string(ComputeParameter parameter) {
  switch (parameter) {
    case ComputeParameter::kHostOverhead:
      return "host-overhead";
    case ComputeParameter::kKernelOverhead:
      return "kernel-overhead";
    case ComputeParameter::kMemoryEfficiency:
      return "memory-efficiency";
    case ComputeParameter::kGemmEfficiency:
      return "gemm-efficiency";
    case ComputeParameter::kAttentionEfficiency:
      return "attention-efficiency";
  }
  STEPCAST_UNREACHABLE("unknown parameter");
}

std::optional<ComputeParameter> parse_compute_parameter(std::string_view name) {
  for (const ComputeParameter p : kParameters) {
    if (name == to_string(p)) return p;
  }
  return std::nullopt;
}

std::string accepted_compute_parameters() {
  std::string out;
  for (const ComputeParameter p : kParameters) out += fmt::format("{}{}", out.empty() ? "" : ", ", to_string(p));
  return out;
}

RunSplit parse_run_split(std::string_view text, const std::string& origin) {
  RunSplit s;
  static constexpr std::array<std::string_view, 6> kKeys = {"gpus",     "group", "workload",
                                                            "topology", "gpu",   "precision"};
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view part = text.substr(start, end - start);
    start = end + 1;
    if (part == "every-other") {
      s.every_other = true;
      continue;
    }
    const auto eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == part.size() ||
        std::find(kKeys.begin(), kKeys.end(), part.substr(0, eq)) == kKeys.end()) {
      throw InputError(
          origin, {},
          fmt::format("expected every-other or KEY=VALUE (KEY one of gpus, group, workload, topology, gpu, precision), "
                      "comma-separated; got \"{}\"",
                      part));
    }
    s.conditions.emplace_back(std::string(part.substr(0, eq)), std::string(part.substr(eq + 1)));
  }
  return s;
}

std::vector<bool> fit_mask(const std::vector<TrainingRun>& runs, const RunSplit& split) {
  std::vector<bool> mask(runs.size(), false);
  std::size_t usable = 0;  // runs meeting the conditions so far, for every-other
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const TrainingRun& r = runs[i];
    if (!r.expressible() || !r.measured_tokens_per_s()) continue;
    bool take = true;
    for (const auto& [key, value] : split.conditions) {
      if (key == "gpus") take = take && std::to_string(r.gpus) == value;
      if (key == "group") take = take && r.group == value;
      if (key == "workload") take = take && r.workload_name == value;
      if (key == "topology") take = take && r.topology_name == value;
      if (key == "gpu") take = take && r.topology->gpu().name == value;
      if (key == "precision") take = take && plan::to_string(r.plan.precision) == value;
    }
    if (take && split.every_other) take = usable++ % 2 == 0;
    mask[i] = take;
  }
  return mask;
}

RunsFit fit_compute_to_runs(const std::vector<TrainingRun>& runs, const std::vector<bool>& mask,
                            const std::vector<ComputeParameter>& parameters, const cost::Calibration& base,
                            const std::string& origin) {
  STEPCAST_ASSERT(mask.size() == runs.size(), "one mask entry per run");
  std::vector<const TrainingRun*> fitted;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (mask[i]) fitted.push_back(&runs[i]);
  }
  if (parameters.empty())
    throw InputError("--fit", {},
                     fmt::format("name at least one parameter to fit ({})", accepted_compute_parameters()));
  if (fitted.size() < parameters.size()) {
    throw InputError(origin, {},
                     fmt::format("{} runs selected to fit {} parameters: need at least as many runs as parameters",
                                 fitted.size(), parameters.size()));
  }
  RunsFit out;
  out.parameters = parameters;
  out.gpu = fitted.front()->topology->gpu().name;
  for (const TrainingRun* r : fitted) {
    if (r->topology->gpu().name != out.gpu) {
      throw InputError(
          origin, {},
          fmt::format("the runs to fit ran on {} and {} ({}): one calibration describes one GPU model; select the runs "
                      "of one with --fit-on gpu=NAME",
                      out.gpu, r->topology->gpu().name, r->where));
    }
  }
  // A GEMM efficiency belongs to one precision: its fit runs must share it.
  const std::string precision(plan::to_string(fitted.front()->plan.precision));
  const bool per_precision =
      std::find(parameters.begin(), parameters.end(), ComputeParameter::kGemmEfficiency) != parameters.end();
  for (const TrainingRun* r : fitted) {
    if (per_precision && plan::to_string(r->plan.precision) != precision) {
      throw InputError(
          origin, {},
          fmt::format("the runs to fit use {} and {} ({}): a GEMM efficiency belongs to one precision; select "
                      "the runs of one with --fit-on precision=NAME",
                      precision, plan::to_string(r->plan.precision), r->where));
    }
  }
  // Held out: the other usable runs on the same GPU model (and precision, for a GEMM efficiency).
  // They are predicted only after the fit.
  std::vector<const TrainingRun*> held;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const TrainingRun& r = runs[i];
    const bool comparable =
        r.topology->gpu().name == out.gpu && (!per_precision || plan::to_string(r.plan.precision) == precision);
    if (!mask[i] && r.expressible() && r.measured_tokens_per_s() && comparable) held.push_back(&r);
  }

  const cost::KernelParams start = cost::kernel_params(base, fitted.front()->topology->gpu(), fitted.front()->plan);
  Eigen::VectorXd x(static_cast<Eigen::Index>(parameters.size()));
  for (std::size_t i = 0; i < parameters.size(); ++i)
    x[static_cast<Eigen::Index>(i)] = to_coordinate(parameters[i], value_of(start, parameters[i]));

  const Residuals residuals(fitted, parameters, base, start, precision);
  out.fit_before = errors_of(fitted, base);
  Eigen::NumericalDiff<Residuals> differentiated(residuals);
  Eigen::LevenbergMarquardt<Eigen::NumericalDiff<Residuals>> lm(differentiated);
  lm.setMaxfev(400);
  lm.minimize(x);
  out.iterations = static_cast<int>(lm.iterations());

  const cost::Calibration fitted_cal = residuals.at(x);
  out.compute = *fitted_cal.compute;
  out.fit_after = errors_of(fitted, fitted_cal);
  out.held_before = errors_of(held, base);
  out.held_after = errors_of(held, fitted_cal);
  std::string names;
  for (const ComputeParameter p : parameters) names += fmt::format("{}{}", names.empty() ? "" : ", ", to_string(p));
  out.compute.source = fmt::format(
      "stepcast calibrate --runs: {} fitted on {} runs of {} on {} (least squares on log throughput; {} held out)",
      names, fitted.size(), origin, out.gpu, held.size());
  return out;
}

}  // namespace stepcast::calibrate
