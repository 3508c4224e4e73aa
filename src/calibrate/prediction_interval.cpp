// Intervals from measured errors: the empirical quantiles of log(predicted / measured) over runs
// of the same class, checked on runs they were not derived from.
#include "stepcast/calibrate/prediction_interval.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace stepcast::calibrate {

namespace {

/// A plan's family: the plans whose errors the model makes alike. Expert-parallel plans (their
/// all-to-alls), plans that shard parameters (FSDP and ZeRO-3 gather every layer's weights in each
/// pass) and the rest, whose data parallelism reduces gradients and gathers parameters once a step
/// (dense 3D: TP/PP/CP/DP, ZeRO-1/2). Finer classes (one per tp/pp/dp shape) held one source's runs
/// each, so their intervals said where that source's cluster ran, not where another's would.
std::string family_of(const plan::Plan& p) {
  if (p.ep > 1) return "expert-parallel";
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

std::string gpu_generation(const topology::GpuSpec& gpu) {
  if (gpu.generation.empty()) return gpu.name;
  std::string out = gpu.generation;
  out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string run_class(const plan::Plan& plan, const topology::GpuSpec& gpu) {
  return gpu_generation(gpu) + ", " + family_of(plan);
}

ResidualSet residuals_of(const std::vector<TrainingRun>& runs, const RunValidation& validation,
                         const std::vector<bool>* use) {
  ResidualSet out;
  for (const ComparedRun& c : validation.runs) {
    if (!c.compared() || !c.measured_tokens_per_s || (use && !(*use)[c.index])) continue;
    const TrainingRun& r = runs[c.index];
    // Predicted over measured step time = measured over predicted throughput.
    const double residual = std::log(*c.measured_tokens_per_s / *c.predicted_tokens_per_s);
    out.by_class[run_class(r.plan, r.topology->gpu())].push_back(residual);
    out.by_generation[gpu_generation(r.topology->gpu())].push_back(residual);
  }
  for (auto& [name, v] : out.by_class) std::sort(v.begin(), v.end());
  for (auto& [name, v] : out.by_generation) std::sort(v.begin(), v.end());
  return out;
}

std::optional<StepInterval> step_interval(const ResidualSet& residuals, const plan::Plan& plan,
                                          const topology::GpuSpec& gpu, Seconds predicted, double coverage) {
  const std::string name = run_class(plan, gpu);
  const auto it = residuals.by_class.find(name);
  if (it == residuals.by_class.end() || it->second.size() < kMinIntervalRuns) return std::nullopt;
  const double tail = (1.0 - coverage) / 2.0;
  StepInterval out;
  // The run took p / exp(r): the largest errors bound it from below.
  out.low = predicted * std::exp(-quantile(it->second, 1.0 - tail));
  out.high = predicted * std::exp(-quantile(it->second, tail));
  out.median = predicted * std::exp(-quantile(it->second, 0.5));
  out.coverage = coverage;
  out.run_class = name;
  out.runs = it->second.size();
  out.derived_from = fmt::format("the model's errors on {} measured runs of {} ({})", out.runs, name, residuals.source);
  return out;
}

IntervalCoverage interval_coverage(const std::vector<TrainingRun>& runs, const RunValidation& validation,
                                   double coverage) {
  std::vector<bool> derive(runs.size(), false);
  std::size_t n = 0;
  for (const ComparedRun& c : validation.runs) {
    if (!c.compared() || !c.measured_tokens_per_s) continue;
    if (n++ % 2 == 0) {
      derive[c.index] = true;
    } else {
      continue;
    }
  }
  const ResidualSet set = residuals_of(runs, validation, &derive);
  IntervalCoverage out;
  std::map<std::string, IntervalCoverage::Line> lines;
  for (const ComparedRun& c : validation.runs) {
    if (!c.compared() || !c.measured_tokens_per_s || derive[c.index]) continue;
    const TrainingRun& r = runs[c.index];
    const std::string name = run_class(r.plan, r.topology->gpu());
    IntervalCoverage::Line& line = lines[name];
    line.run_class = name;
    ++line.checked;
    ++out.overall.checked;
    const auto interval = step_interval(set, r.plan, r.topology->gpu(), c.prediction.step_time, coverage);
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
