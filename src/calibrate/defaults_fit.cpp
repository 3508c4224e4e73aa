// The fit of the model's free parameters on the development corpus (defaults_fit.hpp):
// Levenberg-Marquardt (Eigen's MINPACK port) on each file's runs weighted alike, every parameter
// mapped to an unbounded coordinate by the logit of its place between its bounds.
#include "stepcast/calibrate/defaults_fit.hpp"

#include <fmt/format.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <unsupported/Eigen/LevenbergMarquardt>
#include <unsupported/Eigen/NumericalDiff>

#include "stepcast/calibrate/run_validation.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/topology/model_parameters.hpp"

namespace stepcast::calibrate {

namespace {

/// A start value this close to a bound (as a share of the range) is moved inside it, where the
/// logistic map is finite.
constexpr double kInsideBound = 1e-4;
/// The fit "rests on a bound" when it ends within this share of the range of one.
constexpr double kAtBound = 1e-3;
/// A parameter moved by this share of its range tells the runs that depend on it from the others.
constexpr double kProbe = 0.05;

double to_coordinate(const topology::ParameterSpec& s, double v) {
  const double t = std::clamp((v - s.lower) / (s.upper - s.lower), kInsideBound, 1.0 - kInsideBound);
  return std::log(t / (1.0 - t));
}
double from_coordinate(const topology::ParameterSpec& s, double x) {
  return s.lower + (s.upper - s.lower) / (1.0 + std::exp(-x));
}

/// The step time of each run under `cal`.
std::vector<double> step_times(const std::vector<const TrainingRun*>& runs, const cost::Calibration& cal) {
  std::vector<double> out;
  out.reserve(runs.size());
  for (const TrainingRun* r : runs) out.push_back(predict_analytically(*r, &cal).step_time.value());
  return out;
}

double log_ratio(const TrainingRun& run, const cost::Calibration& cal) {
  const EnginePrediction p = predict_analytically(run, &cal);
  return std::log(run.tokens_per_step() / p.step_time.value() / *run.measured_tokens_per_s());
}

struct Residuals : Eigen::DenseFunctor<double> {
  Residuals(const std::vector<const TrainingRun*>& runs, const std::vector<double>& weights,
            const std::vector<const topology::ParameterSpec*>& free, const cost::Calibration& base)
      : Eigen::DenseFunctor<double>(static_cast<int>(free.size()), static_cast<int>(runs.size())),
        runs_(&runs),
        weights_(&weights),
        free_(&free),
        base_(&base) {}

  [[nodiscard]] cost::Calibration at(const Eigen::VectorXd& x) const {
    cost::Calibration cal = *base_;
    for (std::size_t i = 0; i < free_->size(); ++i) {
      const topology::ParameterSpec& s = *(*free_)[i];
      cal.parameters.values[std::string(s.name)] = from_coordinate(s, x[static_cast<Eigen::Index>(i)]);
    }
    return cal;
  }

  int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& fvec) const {
    const cost::Calibration cal = at(x);
    for (std::size_t i = 0; i < runs_->size(); ++i)
      fvec[static_cast<Eigen::Index>(i)] = (*weights_)[i] * log_ratio(*(*runs_)[i], cal);
    return 0;
  }

  const std::vector<const TrainingRun*>* runs_;
  const std::vector<double>* weights_;
  const std::vector<const topology::ParameterSpec*>* free_;
  const cost::Calibration* base_;
};

double weighted_rms(const Residuals& r, const Eigen::VectorXd& x) {
  Eigen::VectorXd f(r.values());
  r(x, f);
  return std::sqrt(f.squaredNorm() / static_cast<double>(r.runs_->size()));
}

}  // namespace

DefaultsFit fit_defaults(const std::vector<TrainingRun>& runs, const cost::Calibration& base) {
  DefaultsFit out;
  std::vector<const TrainingRun*> fitted;
  for (const TrainingRun& r : runs) {
    if (!r.expressible() || !r.measured_tokens_per_s()) continue;
    fitted.push_back(&r);
    ++out.runs_per_file[r.file];
  }
  // Each file weighs the same: a residual's square counts 1 / (its file's runs x files).
  std::vector<double> weights;
  for (const TrainingRun* r : fitted) {
    weights.push_back(
        std::sqrt(static_cast<double>(fitted.size()) / (static_cast<double>(out.runs_per_file.size()) *
                                                        static_cast<double>(out.runs_per_file.at(r->file)))));
  }
  const topology::ModelParameters shipped = topology::load_model_parameters(topology::shipped_defaults_file());
  cost::Calibration start = base;
  for (const topology::ParameterSpec& s : topology::model_parameters()) {
    const std::string name(s.name);
    const auto given = base.parameters.values.find(name);
    start.parameters.values[name] =
        given != base.parameters.values.end() ? given->second : shipped.values.at(name).value;
  }
  // The runs that bear on a parameter are those whose prediction moves when it moves (a GPU file
  // may name a parameter for a precision or kernel the run's plan does not use).
  const std::vector<double> base_times = step_times(fitted, start);
  std::vector<const topology::ParameterSpec*> free;
  for (const topology::ParameterSpec& s : topology::model_parameters()) {
    const std::string name(s.name);
    FittedParameter p;
    p.name = name;
    p.start = start.parameters.values.at(name);
    cost::Calibration moved = start;
    moved.parameters.values[name] =
        p.start + (p.start - s.lower < s.upper - p.start ? 1.0 : -1.0) * kProbe * (s.upper - s.lower);
    const std::vector<double> times = step_times(fitted, moved);
    for (std::size_t i = 0; i < fitted.size(); ++i) p.runs += times[i] != base_times[i] ? 1 : 0;
    p.measured = base.parameters.measured.contains(name);
    if (p.runs > 0 && !p.measured) free.push_back(&s);
    out.parameters.push_back(p);
  }
  if (fitted.size() < free.size()) {
    throw InputError(
        fmt::format("{} runs with a measured throughput to fit {} free parameters: need at least as many "
                    "runs as parameters",
                    fitted.size(), free.size()));
  }
  Eigen::VectorXd x(static_cast<Eigen::Index>(free.size()));
  for (std::size_t i = 0; i < free.size(); ++i) {
    x[static_cast<Eigen::Index>(i)] = to_coordinate(*free[i], start.parameters.values.at(std::string(free[i]->name)));
  }
  const Residuals residuals(fitted, weights, free, start);
  out.rms_before = weighted_rms(residuals, x);
  if (!free.empty()) {
    Eigen::NumericalDiff<Residuals> differentiated(residuals);
    Eigen::LevenbergMarquardt<Eigen::NumericalDiff<Residuals>> lm(differentiated);
    lm.setMaxfev(static_cast<Eigen::Index>(60) * static_cast<Eigen::Index>(free.size() + 1));
    lm.minimize(x);
    out.iterations = static_cast<int>(lm.iterations());
  }
  out.rms_after = weighted_rms(residuals, x);
  const cost::Calibration end = residuals.at(x);

  std::string files;
  for (const auto& [file, n] : out.runs_per_file)
    files += fmt::format("{}{} ({} runs)", files.empty() ? "" : ", ", file, n);
  for (FittedParameter& p : out.parameters) {
    const topology::ParameterSpec& s = *topology::find_parameter(p.name);
    p.value = end.parameters.values.at(p.name);
    p.at_bound =
        p.runs > 0 && !p.measured && std::min(p.value - s.lower, s.upper - p.value) < kAtBound * (s.upper - s.lower);
    out.fitted.values[p.name] = p.value;
    std::string& source = out.fitted.sources[p.name];
    if (p.measured) {
      source =
          fmt::format("measured, not fitted ({} runs depend on it): {}", p.runs, base.parameters.sources.at(p.name));
    } else if (p.runs == 0) {
      source = fmt::format("not fitted: no run of {} depends on it; kept at its start, {}", files,
                           topology::format_parameter(s, p.value));
    } else {
      source = fmt::format(
          "least squares on log throughput of the {} runs that depend on it, each file weighed alike ({}){}", p.runs,
          files, p.at_bound ? "; rests on a bound of its range" : "");
    }
  }
  return out;
}

}  // namespace stepcast::calibrate
