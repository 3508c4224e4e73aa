// `validate --runs` output: the per-run table, the error summaries, the per-group Spearman
// correlations, as text or JSON, and the predicted-against-measured step-time plot.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "stepcast/core/units.hpp"
#include "stepcast/report/chart.hpp"
#include "stepcast/report/collective_format.hpp"
#include "stepcast/report/run_reports.hpp"

#include "stepcast/calibrate/prediction_interval.hpp"

namespace stepcast::report {

namespace {

using calibrate::ComparedRun;
using calibrate::MetricSummary;
using calibrate::RunMetric;
using calibrate::RunValidation;
using calibrate::TrainingRun;
using Json = nlohmann::ordered_json;

std::string format_value(RunMetric metric, double v) {
  switch (metric) {
    case RunMetric::kStepTime:
      return format_seconds(Seconds(v));
    case RunMetric::kTokensPerS:
    case RunMetric::kTokensPerSPerGpu:
      return fmt::format("{:.6g}", v);
    case RunMetric::kModelFlopsPerGpu:
    case RunMetric::kHardwareFlopsPerGpu:
      return format_flops_rate(FlopsPerSecond(v));
    case RunMetric::kMfu:
    case RunMetric::kHfu:
      return fmt::format("{:.2f}%", 100.0 * v);
    case RunMetric::kPeakMemory:
      return format_bytes(Bytes(v));
  }
  return {};
}

/// The figures some compared run measured, in kRunMetrics order.
std::vector<RunMetric> metrics_in_use(const RunValidation& r) {
  std::vector<RunMetric> out;
  for (const MetricSummary& s : r.metrics) out.push_back(s.metric);
  return out;
}

std::string engine_words(const RunReportContext& c) {
  return fmt::format("{} ({})", c.engine == "des" ? "discrete-event simulation" : "analytical model",
                     c.calibration.empty() ? "uncalibrated" : "calibration " + c.calibration);
}

std::string summary_line(const MetricSummary& s, std::string_view label) {
  return fmt::format("  {:<22} {:>6} {:>8.2f}% {:>8.2f}% {:>8.2f}% {:>8.2f}%\n", label, s.runs, s.median_abs_error_pct,
                     s.mean_abs_error_pct, s.p90_abs_error_pct, s.max_abs_error_pct);
}

std::string summary_header(std::string_view first) {
  return fmt::format("  {:<22} {:>6} {:>9} {:>9} {:>9} {:>9}\n", first, "runs", "median", "mean", "p90", "worst");
}

/// The measured step time a run stands for: its own, or tokens per step / measured tokens/s.
std::optional<double> measured_step_time(const TrainingRun& run, const ComparedRun& c) {
  if (run.measured.step_time) return run.measured.step_time->value();
  if (c.measured_tokens_per_s) return run.tokens_per_step() / *c.measured_tokens_per_s;
  return std::nullopt;
}

Json summary_json(const MetricSummary& s) {
  return {{"metric", std::string(calibrate::json_key(s.metric))}, {"runs", s.runs},
          {"median_abs_error_pct", sig9(s.median_abs_error_pct)}, {"mean_abs_error_pct", sig9(s.mean_abs_error_pct)},
          {"p90_abs_error_pct", sig9(s.p90_abs_error_pct)},       {"max_abs_error_pct", sig9(s.max_abs_error_pct)}};
}

}  // namespace

std::string run_validation_text(const std::vector<TrainingRun>& runs, const RunValidation& r,
                                const RunReportContext& c) {
  std::string files;
  for (const auto& f : c.files) files += (files.empty() ? "" : ", ") + f;
  std::string out = fmt::format(
      "Training runs: {} from {}\nPredicted by the {} against measured; error % = (predicted - measured) / "
      "measured\n\n",
      runs.size(), files, engine_words(c));
  const std::vector<RunMetric> metrics = metrics_in_use(r);
  std::size_t id_width = 6;
  for (const auto& run : runs) id_width = std::max(id_width, run.id.size());
  out += fmt::format("{:<{}} {:>5}", "run", id_width, "GPUs");
  for (const RunMetric m : metrics) {
    out += fmt::format(" {:>16} {:>16} {:>8}", fmt::format("{} meas", calibrate::to_string(m)), "predicted", "error %");
  }
  out += "  plan\n";
  for (const ComparedRun& cr : r.runs) {
    if (!cr.compared()) continue;
    const TrainingRun& run = runs[cr.index];
    out += fmt::format("{:<{}} {:>5}", run.id, id_width, run.gpus);
    for (const RunMetric m : metrics) {
      const auto e = std::find_if(cr.errors.begin(), cr.errors.end(), [m](const auto& x) { return x.metric == m; });
      if (e == cr.errors.end()) {
        out += fmt::format(" {:>16} {:>16} {:>8}", "", "", "");
      } else {
        out += fmt::format(" {:>16} {:>16} {:>+8.2f}", format_value(m, e->measured), format_value(m, e->predicted),
                           e->error_pct);
      }
    }
    out += fmt::format("  {}\n", run.plan_text);
  }
  if (r.inexpressible > 0) {
    out += fmt::format("\nNot predicted: {} of {} runs the {} cannot express (counted, not compared)\n",
                       r.inexpressible, runs.size(), c.engine == "des" ? "simulator" : "model");
    for (const ComparedRun& cr : r.runs) {
      if (!cr.compared())
        out += fmt::format("  {} ({}): {}\n", runs[cr.index].id, runs[cr.index].where, cr.inexpressible);
    }
  }
  if (r.not_fitting > 0) {
    out += fmt::format("\nThe memory model says {} of these measured runs do not fit (predicted anyway: they ran):\n",
                       r.not_fitting);
    for (const ComparedRun& cr : r.runs) {
      if (cr.compared() && !cr.prediction.fit.fits) {
        out += fmt::format("  {}: needs {} of {}\n", runs[cr.index].id, format_bytes(cr.prediction.memory),
                           format_bytes(cr.prediction.fit.capacity));
      }
    }
  }
  const std::size_t compared = runs.size() - r.inexpressible;
  out += fmt::format("\nAbsolute error over the {} compared runs\n", compared);
  out += summary_header("figure");
  bool memory = false;
  for (const MetricSummary& s : r.metrics) {
    if (s.metric == RunMetric::kPeakMemory) {
      memory = true;
    } else {
      out += summary_line(s, calibrate::to_string(s.metric));
    }
  }
  if (memory) {
    out += "Peak memory per GPU against `stepcast memory`'s total\n";
    out += summary_header("figure");
    for (const MetricSummary& s : r.metrics) {
      if (s.metric == RunMetric::kPeakMemory) out += summary_line(s, calibrate::to_string(s.metric));
    }
  }
  out += "\nBy group (Spearman: rank correlation of measured and predicted throughput over the group's runs)\n";
  for (const auto& g : r.groups) {
    out +=
        fmt::format("  {}: {} run{}, Spearman {}\n", g.group, g.runs, g.runs == 1 ? "" : "s",
                    g.spearman ? fmt::format("{:+.3f}", *g.spearman) : std::string("n/a (fewer than 3 runs or tied)"));
    for (const MetricSummary& s : g.metrics)
      out += summary_line(s, fmt::format("  {}", calibrate::to_string(s.metric)));
  }
  out += r.median_spearman ? fmt::format("Median Spearman over the {} groups with one: {:+.3f}\n", r.ranked_groups,
                                         *r.median_spearman)
                           : std::string("No group has 3 or more runs with a throughput: no Spearman correlation\n");
  if (r.median_plan_spearman) {
    out += fmt::format(
        "Median Spearman over the distinct plans of the {} groups with 3 or more (runs of one plan at their mean): "
        "{:+.3f}\n",
        r.plan_ranked_groups, *r.median_plan_spearman);
  }
  const calibrate::IntervalCoverage coverage = calibrate::interval_coverage(runs, r);
  out +=
      "\nThe 90% step-time interval predict prints, derived from every other compared run and checked on the others\n";
  const auto line = [&out](const calibrate::IntervalCoverage::Line& l) {
    const std::size_t with = l.checked - l.without_interval;
    out += fmt::format("  {:<32} {:>5} checked  {:>5} inside ({})  {:>4} without an interval\n", l.run_class, l.checked,
                       l.inside,
                       with ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(l.inside) / static_cast<double>(with))
                            : std::string("n/a"),
                       l.without_interval);
  };
  for (const auto& l : coverage.classes) line(l);
  line(coverage.overall);
  return out;
}

std::string run_validation_json(const std::vector<TrainingRun>& runs, const RunValidation& r,
                                const RunReportContext& c) {
  Json j;
  j["files"] = c.files;
  j["engine"] = c.engine;
  j["calibration"] = c.calibration.empty() ? Json(nullptr) : Json(c.calibration);
  Json rows = Json::array();
  for (const ComparedRun& cr : r.runs) {
    const TrainingRun& run = runs[cr.index];
    Json row;
    row["run"] = run.id;
    row["where"] = run.where;
    row["group"] = run.group;
    row["workload"] = run.workload_name;
    row["topology"] = run.topology_name;
    row["gpus"] = run.gpus;
    row["plan_as_written"] = run.plan_text;
    if (!run.fsdp_mixed_precision.empty()) row["fsdp_mixed_precision"] = run.fsdp_mixed_precision;
    if (!cr.compared()) {
      row["status"] = "inexpressible";
      row["reason"] = cr.inexpressible;
      rows.push_back(std::move(row));
      continue;
    }
    row["status"] = "compared";
    row["plan"] = plan::to_string(run.plan);
    row["run_class"] = calibrate::run_class(*run.workload, run.plan, run.topology->gpu());
    row["predicted_step_time_s"] = sig9(cr.prediction.step_time.value());
    row["predicted_memory_per_gpu_bytes"] = sig9(cr.prediction.memory.value());
    row["fits"] = cr.prediction.fit.fits;
    Json errors = Json::array();
    for (const auto& e : cr.errors) {
      errors.push_back({{"metric", std::string(calibrate::json_key(e.metric))},
                        {"measured", sig9(e.measured)},
                        {"predicted", sig9(e.predicted)},
                        {"error_pct", sig9(e.error_pct)}});
    }
    row["metrics"] = std::move(errors);
    rows.push_back(std::move(row));
  }
  j["runs"] = std::move(rows);
  j["compared"] = runs.size() - r.inexpressible;
  j["inexpressible"] = r.inexpressible;
  j["not_fitting"] = r.not_fitting;
  Json summary = Json::array();
  for (const MetricSummary& s : r.metrics) summary.push_back(summary_json(s));
  j["summary"] = std::move(summary);
  Json groups = Json::array();
  for (const auto& g : r.groups) {
    Json metrics = Json::array();
    for (const MetricSummary& s : g.metrics) metrics.push_back(summary_json(s));
    groups.push_back({{"group", g.group},
                      {"runs", g.runs},
                      {"spearman", g.spearman ? Json(sig9(*g.spearman)) : Json(nullptr)},
                      {"plans", g.plans},
                      {"plan_spearman", g.plan_spearman ? Json(sig9(*g.plan_spearman)) : Json(nullptr)},
                      {"summary", std::move(metrics)}});
  }
  j["groups"] = std::move(groups);
  j["median_spearman"] = r.median_spearman ? Json(sig9(*r.median_spearman)) : Json(nullptr);
  j["ranked_groups"] = r.ranked_groups;
  j["median_plan_spearman"] = r.median_plan_spearman ? Json(sig9(*r.median_plan_spearman)) : Json(nullptr);
  j["plan_ranked_groups"] = r.plan_ranked_groups;
  const calibrate::IntervalCoverage coverage = calibrate::interval_coverage(runs, r);
  const auto line_json = [](const calibrate::IntervalCoverage::Line& l) {
    return Json{{"run_class", l.run_class},
                {"checked", l.checked},
                {"inside", l.inside},
                {"without_interval", l.without_interval}};
  };
  Json classes = Json::array();
  for (const auto& l : coverage.classes) classes.push_back(line_json(l));
  j["interval_coverage"] = {{"coverage", 0.9},
                            {"derived_from", "every other compared run"},
                            {"classes", std::move(classes)},
                            {"overall", line_json(coverage.overall)}};
  return j.dump(2) + "\n";
}

std::string run_validation_svg(const std::vector<TrainingRun>& runs, const RunValidation& r,
                               const RunReportContext& c) {
  ScatterChart chart;
  std::string files;
  for (const auto& f : c.files) files += (files.empty() ? "" : ", ") + std::filesystem::path(f).filename().string();
  chart.title = fmt::format("Step time, {}: {}", files, engine_words(c));
  chart.x_label = "measured step time (s)";
  chart.y_label = "predicted step time (s)";
  for (const auto& g : r.groups) chart.groups.push_back({g.group, {}});
  for (const ComparedRun& cr : r.runs) {
    if (!cr.compared()) continue;
    const TrainingRun& run = runs[cr.index];
    const auto measured = measured_step_time(run, cr);
    if (!measured) continue;
    const auto g =
        std::find_if(chart.groups.begin(), chart.groups.end(), [&run](const auto& x) { return x.name == run.group; });
    g->points.push_back({*measured, cr.prediction.step_time.value()});
  }
  std::erase_if(chart.groups, [](const ScatterGroup& g) { return g.points.empty(); });
  return render_svg(chart) + "\n";
}

}  // namespace stepcast::report
