// Comparing predicted with measured training runs: per-run errors, summaries per figure and per
// group, and Spearman's rank correlation of each group's plans.
#include "stepcast/calibrate/run_validation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "stepcast/calibrate/validation.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/graph/predict.hpp"

namespace stepcast::calibrate {

namespace {

/// Ranks 1..n, tied values sharing the mean of the ranks they span.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&v](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> out(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double shared = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) out[order[k]] = shared;
    i = j + 1;
  }
  return out;
}

/// The figures of one run, predicted from the engine's step time and memory.
std::vector<MetricError> errors_of(const TrainingRun& run, const EnginePrediction& p,
                                   std::optional<double> measured_tps, double predicted_tps) {
  std::vector<MetricError> out;
  const auto add = [&out](RunMetric metric, double measured, double predicted) {
    out.push_back({metric, measured, predicted, (predicted - measured) / measured * 100.0});
  };
  const RunMeasurement& m = run.measured;
  // Utilisation figures keep the run's own FLOP count: scaled by the throughput ratio.
  const double scale = measured_tps ? predicted_tps / *measured_tps : 0.0;
  if (m.step_time) add(RunMetric::kStepTime, m.step_time->value(), p.step_time.value());
  if (m.tokens_per_s) add(RunMetric::kTokensPerS, *m.tokens_per_s, predicted_tps);
  if (m.tokens_per_s_per_gpu) add(RunMetric::kTokensPerSPerGpu, *m.tokens_per_s_per_gpu, predicted_tps / run.gpus);
  if (m.model_flops_per_gpu)
    add(RunMetric::kModelFlopsPerGpu, m.model_flops_per_gpu->value(), m.model_flops_per_gpu->value() * scale);
  if (m.hardware_flops_per_gpu) {
    add(RunMetric::kHardwareFlopsPerGpu, m.hardware_flops_per_gpu->value(), m.hardware_flops_per_gpu->value() * scale);
  }
  if (m.mfu) add(RunMetric::kMfu, *m.mfu, *m.mfu * scale);
  if (m.hfu) add(RunMetric::kHfu, *m.hfu, *m.hfu * scale);
  if (m.peak_memory_per_gpu) add(RunMetric::kPeakMemory, m.peak_memory_per_gpu->value(), p.allocated.value());
  return out;
}

/// Summaries of the figures measured by `members` (indices into `runs`), in kRunMetrics order.
std::vector<MetricSummary> summaries(const std::vector<ComparedRun>& runs, const std::vector<std::size_t>& members) {
  std::vector<MetricSummary> out;
  for (const RunMetric metric : kRunMetrics) {
    std::vector<double> abs_errors;
    for (const std::size_t i : members) {
      for (const MetricError& e : runs[i].errors) {
        if (e.metric == metric) abs_errors.push_back(std::fabs(e.error_pct));
      }
    }
    if (!abs_errors.empty()) out.push_back(summarise(metric, abs_errors));
  }
  return out;
}

}  // namespace

std::string_view to_string(RunMetric metric) {
  switch (metric) {
    case RunMetric::kStepTime:
      return "step time";
    case RunMetric::kTokensPerS:
      return "tokens/s";
    case RunMetric::kTokensPerSPerGpu:
      return "tokens/s/GPU";
    case RunMetric::kModelFlopsPerGpu:
      return "model FLOP/s/GPU";
    case RunMetric::kHardwareFlopsPerGpu:
      return "hardware FLOP/s/GPU";
    case RunMetric::kMfu:
      return "MFU";
    case RunMetric::kHfu:
      return "HFU";
    case RunMetric::kPeakMemory:
      return "peak memory/GPU";
  }
  STEPCAST_UNREACHABLE("unknown metric");
}

std::string_view json_key(RunMetric metric) {
  switch (metric) {
    case RunMetric::kStepTime:
      return "step_time_s";
    case RunMetric::kTokensPerS:
      return "tokens_per_s";
    case RunMetric::kTokensPerSPerGpu:
      return "tokens_per_s_per_gpu";
    case RunMetric::kModelFlopsPerGpu:
      return "model_flop_per_s_per_gpu";
    case RunMetric::kHardwareFlopsPerGpu:
      return "hardware_flop_per_s_per_gpu";
    case RunMetric::kMfu:
      return "mfu";
    case RunMetric::kHfu:
      return "hfu";
    case RunMetric::kPeakMemory:
      return "peak_memory_per_gpu_bytes";
  }
  STEPCAST_UNREACHABLE("unknown metric");
}

EnginePrediction predict_analytically(const TrainingRun& run, const cost::Calibration* calibration) {
  STEPCAST_ASSERT(run.expressible(), "only expressible runs are predicted");
  graph::StepOptions options;  // predict's: default memory options, the calibration if any
  options.calibration = calibration;
  options.explain = false;  // formatting only; the figures are the same
  const graph::StepPrediction p = graph::predict_step(*run.workload, run.plan, *run.topology, options);
  return {p.step_time, p.memory.total, p.fit, cost::allocated_bytes(p.memory)};
}

MetricSummary summarise(RunMetric metric, const std::vector<double>& abs_errors_pct) {
  MetricSummary s;
  s.metric = metric;
  s.runs = abs_errors_pct.size();
  if (abs_errors_pct.empty()) return s;
  s.median_abs_error_pct = percentile(abs_errors_pct, 50.0);
  s.mean_abs_error_pct =
      std::accumulate(abs_errors_pct.begin(), abs_errors_pct.end(), 0.0) / static_cast<double>(s.runs);
  s.p90_abs_error_pct = percentile(abs_errors_pct, 90.0);
  s.max_abs_error_pct = percentile(abs_errors_pct, 100.0);
  return s;
}

std::optional<double> spearman(const std::vector<double>& a, const std::vector<double>& b) {
  STEPCAST_ASSERT(a.size() == b.size(), "Spearman needs pairs");
  if (a.size() < 3) return std::nullopt;
  const std::vector<double> ra = ranks(a);
  const std::vector<double> rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double mean = (n + 1.0) / 2.0;  // the mean of ranks 1..n, ties included
  double cov = 0.0;
  double var_a = 0.0;
  double var_b = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    cov += (ra[i] - mean) * (rb[i] - mean);
    var_a += (ra[i] - mean) * (ra[i] - mean);
    var_b += (rb[i] - mean) * (rb[i] - mean);
  }
  if (var_a == 0.0 || var_b == 0.0) return std::nullopt;
  return cov / std::sqrt(var_a * var_b);
}

namespace {

/// A group's distinct plans (workload and resolved plan) with a measured throughput: each at its
/// runs' mean measured throughput and its prediction (the same for every run of the plan).
struct DistinctPlans {
  std::vector<double> measured;
  std::vector<double> predicted;
};
DistinctPlans distinct_plans(const std::vector<TrainingRun>& runs, const std::vector<ComparedRun>& compared,
                             const std::vector<std::size_t>& in_group) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::vector<double>, double>> by_plan;
  for (const std::size_t i : in_group) {
    if (!compared[i].measured_tokens_per_s) continue;
    const std::string key = runs[i].workload_name + " " + plan::to_string(runs[i].plan);
    auto [it, added] = by_plan.try_emplace(key);
    if (added) order.push_back(key);
    it->second.first.push_back(*compared[i].measured_tokens_per_s);
    it->second.second = *compared[i].predicted_tokens_per_s;
  }
  DistinctPlans out;
  for (const std::string& key : order) {
    const auto& [measured, predicted] = by_plan.at(key);
    out.measured.push_back(std::accumulate(measured.begin(), measured.end(), 0.0) /
                           static_cast<double>(measured.size()));
    out.predicted.push_back(predicted);
  }
  return out;
}

}  // namespace

RunValidation validate_runs(const std::vector<TrainingRun>& runs, const RunEngine& engine,
                            const std::function<void()>& progress) {
  RunValidation out;
  std::vector<std::string> group_order;
  std::map<std::string, std::vector<std::size_t>> members;
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const TrainingRun& run = runs[i];
    ComparedRun c;
    c.index = i;
    c.inexpressible = run.inexpressible;
    if (c.compared()) {
      c.prediction = engine(run);
      c.measured_tokens_per_s = run.measured_tokens_per_s();
      c.predicted_tokens_per_s = run.tokens_per_step() / c.prediction.step_time.value();
      c.errors = errors_of(run, c.prediction, c.measured_tokens_per_s, *c.predicted_tokens_per_s);
      if (!c.prediction.fit.fits) ++out.not_fitting;
      auto [it, added] = members.try_emplace(run.group);
      if (added) group_order.push_back(run.group);
      it->second.push_back(i);
      all.push_back(i);
    } else {
      ++out.inexpressible;
    }
    out.runs.push_back(std::move(c));
    if (progress) progress();
  }
  out.metrics = summaries(out.runs, all);
  std::vector<double> correlations;
  std::vector<double> plan_correlations;
  for (const std::string& name : group_order) {
    const std::vector<std::size_t>& in_group = members[name];
    GroupResult g;
    g.group = name;
    g.runs = in_group.size();
    g.metrics = summaries(out.runs, in_group);
    std::vector<double> measured;
    std::vector<double> predicted;
    for (const std::size_t i : in_group) {
      if (!out.runs[i].measured_tokens_per_s) continue;
      measured.push_back(*out.runs[i].measured_tokens_per_s);
      predicted.push_back(*out.runs[i].predicted_tokens_per_s);
    }
    g.spearman = spearman(measured, predicted);
    if (g.spearman) correlations.push_back(*g.spearman);
    const DistinctPlans distinct = distinct_plans(runs, out.runs, in_group);
    g.plans = distinct.measured.size();
    g.plan_spearman = spearman(distinct.measured, distinct.predicted);
    if (g.plan_spearman) plan_correlations.push_back(*g.plan_spearman);
    out.groups.push_back(std::move(g));
  }
  out.ranked_groups = correlations.size();
  if (!correlations.empty()) out.median_spearman = percentile(correlations, 50.0);
  out.plan_ranked_groups = plan_correlations.size();
  if (!plan_correlations.empty()) out.median_plan_spearman = percentile(plan_correlations, 50.0);
  return out;
}

}  // namespace stepcast::calibrate
