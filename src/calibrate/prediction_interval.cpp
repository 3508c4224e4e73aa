// Intervals from measured errors: the empirical quantiles of log(predicted / measured) over runs
// of the same class, widened by how far sources' medians lie apart, checked on runs they were not
// derived from.
#include "stepcast/calibrate/prediction_interval.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cctype>
#include <cmath>

namespace stepcast::calibrate {

namespace {

/// A plan's family: the plans whose errors the model makes alike. Models with routed experts
/// (their router, permutes and grouped GEMMs, and all-to-alls at ep > 1), plans that shard
/// parameters (FSDP and ZeRO-3 gather every layer's weights in each pass) and the rest, whose data
/// parallelism reduces gradients and gathers parameters once a step (dense 3D: TP/PP/CP/DP,
/// ZeRO-1/2). Finer classes (one per tp/pp/dp shape) held one source's runs each, so their
/// intervals said where that source's cluster ran, not where another's would.
std::string family_of(const workload::Workload& w, const plan::Plan& p) {
  if (w.shape && w.shape->moe) return "MoE";
  if (p.dp > 1 && p.zero_stage() >= 3) return "FSDP/ZeRO-3";
  return "dense 3D";
}

/// The value below which `q` of the sorted sample lies (linear between order statistics).
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

std::vector<double> within_source_deviations(const ErrorsBySource& errors) {
  std::vector<double> out;
  for (const auto& [file, e] : errors) {
    const double median = quantile(e, 0.5);
    for (const double x : e) out.push_back(x - median);
  }
  std::sort(out.begin(), out.end());
  return out;
}

SourceSpread between_source_spread(const ResidualSet& residuals) {
  // Group -> source -> errors: by class, or by plan family over every generation where no class
  // holds two sources.
  using Groups = std::map<std::string, ErrorsBySource>;
  const auto spread = [](const Groups& groups) -> std::optional<SourceSpread> {
    double variance_sum = 0.0;
    std::size_t shared = 0;
    std::size_t dof = 0;
    for (const auto& [name, sources] : groups) {
      if (sources.size() < 2) continue;
      std::vector<double> medians;
      for (const auto& [file, errors] : sources) medians.push_back(quantile(errors, 0.5));
      double mean = 0.0;
      for (const double m : medians) mean += m / static_cast<double>(medians.size());
      double squares = 0.0;
      for (const double m : medians) squares += (m - mean) * (m - mean);
      variance_sum += squares / static_cast<double>(medians.size() - 1);
      ++shared;
      dof += medians.size() - 1;
    }
    if (shared == 0) return std::nullopt;
    return SourceSpread{std::sqrt(variance_sum / static_cast<double>(shared)), dof};
  };
  if (const auto by_class = spread(residuals.by_class)) return *by_class;
  Groups by_family;
  for (const auto& [name, sources] : residuals.by_class) {
    const std::string family = name.substr(name.rfind(", ") + 2);
    for (const auto& [file, errors] : sources) {
      std::vector<double>& merged = by_family[family][file];
      merged.insert(merged.end(), errors.begin(), errors.end());
    }
  }
  for (auto& [family, sources] : by_family)
    for (auto& [file, errors] : sources) std::sort(errors.begin(), errors.end());
  return spread(by_family).value_or(SourceSpread{});
}

double new_source_offset(const SourceSpread& spread, std::size_t class_sources, double coverage) {
  if (spread.degrees_of_freedom == 0 || spread.tau <= 0.0) return 0.0;
  const boost::math::students_t t(static_cast<double>(spread.degrees_of_freedom));
  const double upper = boost::math::quantile(t, (1.0 + coverage) / 2.0);
  return upper * spread.tau * std::sqrt(1.0 + 1.0 / static_cast<double>(class_sources));
}

std::string gpu_generation(const topology::GpuSpec& gpu) {
  if (gpu.generation.empty()) return gpu.name;
  std::string out = gpu.generation;
  out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string run_class(const workload::Workload& workload, const plan::Plan& plan, const topology::GpuSpec& gpu) {
  return gpu_generation(gpu) + ", " + family_of(workload, plan);
}

ResidualSet residuals_of(const std::vector<TrainingRun>& runs, const RunValidation& validation,
                         const std::vector<bool>* use) {
  ResidualSet out;
  for (const ComparedRun& c : validation.runs) {
    if (!c.compared() || !c.measured_tokens_per_s || (use && !(*use)[c.index])) continue;
    const TrainingRun& r = runs[c.index];
    // Predicted over measured step time = measured over predicted throughput.
    const double residual = std::log(*c.measured_tokens_per_s / *c.predicted_tokens_per_s);
    out.by_class[run_class(*r.workload, r.plan, r.topology->gpu())][r.file].push_back(residual);
    out.by_generation[gpu_generation(r.topology->gpu())][r.file].push_back(residual);
  }
  for (auto* groups : {&out.by_class, &out.by_generation})
    for (auto& [name, sources] : *groups)
      for (auto& [file, v] : sources) std::sort(v.begin(), v.end());
  return out;
}

std::optional<StepInterval> step_interval(const ResidualSet& residuals, const workload::Workload& workload,
                                          const plan::Plan& plan, const topology::GpuSpec& gpu, Seconds predicted,
                                          double coverage) {
  const std::string name = run_class(workload, plan, gpu);
  const auto it = residuals.by_class.find(name);
  if (it == residuals.by_class.end()) return std::nullopt;
  // Centre: the mean of the sources' medians, each source one cluster's offset and weighed
  // alike (the offset between sources outweighs a median's sampling noise, even a two-run
  // source's); spread: each run's deviation from its own source's median.
  const std::vector<double> deviations = within_source_deviations(it->second);
  if (deviations.size() < kMinIntervalRuns) return std::nullopt;
  double centre = 0.0;
  for (const auto& [file, errors] : it->second)
    centre += quantile(errors, 0.5) / static_cast<double>(it->second.size());
  const double tail = (1.0 - coverage) / 2.0;
  const SourceSpread spread = between_source_spread(residuals);
  const double offset = new_source_offset(spread, it->second.size(), coverage);
  const double below = std::hypot(quantile(deviations, tail), offset);
  const double above = std::hypot(quantile(deviations, 1.0 - tail), offset);
  StepInterval out;
  // The run took p / exp(r): the largest errors bound it from below.
  out.low = predicted * std::exp(-(centre + above));
  out.high = predicted * std::exp(-(centre - below));
  out.median = predicted * std::exp(-centre);
  out.coverage = coverage;
  out.run_class = name;
  out.runs = deviations.size();
  out.sources = it->second.size();
  out.between_source = spread.tau;
  out.between_source_dof = spread.degrees_of_freedom;
  out.derived_from = fmt::format(
      "the model's errors on {} measured runs of {}{} ({})", out.runs, name,
      offset > 0.0 ? fmt::format(", widened for a cluster none of them ran by the spread between sources ({:.3f} in "
                                 "log step; Student's t, {} degrees of freedom)",
                                 spread.tau, spread.degrees_of_freedom)
                   : std::string(),
      residuals.source);
  return out;
}

IntervalCoverage interval_coverage(const std::vector<TrainingRun>& runs, const RunValidation& validation,
                                   double coverage) {
  std::vector<bool> derive(runs.size(), false);
  std::size_t n = 0;
  for (const ComparedRun& c : validation.runs) {
    if (!c.compared() || !c.measured_tokens_per_s) continue;
    if (n++ % 2 == 0) derive[c.index] = true;
  }
  const ResidualSet set = residuals_of(runs, validation, &derive);
  IntervalCoverage out;
  std::map<std::string, IntervalCoverage::Line> lines;
  for (const ComparedRun& c : validation.runs) {
    if (!c.compared() || !c.measured_tokens_per_s || derive[c.index]) continue;
    const TrainingRun& r = runs[c.index];
    const std::string name = run_class(*r.workload, r.plan, r.topology->gpu());
    IntervalCoverage::Line& line = lines[name];
    line.run_class = name;
    ++line.checked;
    ++out.overall.checked;
    const auto interval = step_interval(set, *r.workload, r.plan, r.topology->gpu(), c.prediction.step_time, coverage);
    if (!interval) {
      ++line.without_interval;
      ++out.overall.without_interval;
      continue;
    }
    const Seconds measured = Seconds(r.tokens_per_step() / *c.measured_tokens_per_s);
    if (measured >= interval->low && measured <= interval->high) {
      ++line.inside;
      ++out.overall.inside;
    }
  }
  out.overall.run_class = "all";
  for (auto& [name, line] : lines) out.classes.push_back(line);
  return out;
}

}  // namespace stepcast::calibrate
