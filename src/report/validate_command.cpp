// `stepcast validate`: predicted against measured for every point of nccl-tests logs or
// stepcast-nccl-bench JSON and every operator of stepcast-kernel-bench JSON, with the error of
// each, the median, p90 and worst error (per operator family too), and a bus-bandwidth plot on
// request.
#include "stepcast/report/validate_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stepcast/calibrate/fit.hpp"
#include "stepcast/calibrate/inputs.hpp"
#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/calibrate/validation.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/report/chart.hpp"
#include "stepcast/report/collective_format.hpp"
#include "stepcast/report/reading_summary.hpp"

namespace stepcast::report {

namespace {

std::string table_text(const calibrate::Comparison& c) {
  std::string out =
      fmt::format("{:<14} {:<12} {:>13} {:>10} {:>14} {:>14} {:>14} {:>14} {:>9}\n", "collective", "model", "size (B)",
                  "size", "measured (us)", "meas busbw", "predicted (us)", "pred busbw", "error %");
  for (const auto& p : c.points) {
    out += fmt::format("{:<14} {:<12} {:>13.0f} {:>10} {:>14.2f} {:>14} {:>14.2f} {:>14} {:>+9.2f}\n",
                       cost::to_string(p.sample.op), p.model, p.sample.size.value(), format_bytes(p.sample.size),
                       p.sample.measured.value() * unit::kMega, format_bandwidth(p.sample.measured_busbw),
                       p.predicted.value() * unit::kMega, format_bandwidth(p.predicted_busbw), p.error_pct);
  }
  out += fmt::format("{} points: |error| median {:.2f}%, p90 {:.2f}%, worst {:.2f}%\n", c.points.size(),
                     c.median_abs_error_pct, c.p90_abs_error_pct, c.max_abs_error_pct);
  return out;
}

std::string shape_text(const calibrate::TimedOperator& op) {
  if (op.kind == cost::OpKind::kMemory) return fmt::format("{:.0f} elements", op.elements);
  const auto& g = op.gemm;
  const std::string mnk = fmt::format("{:.0f} x {:.0f} x {:.0f}", g.m, g.n, g.k);
  return g.batch > 1.0 ? fmt::format("{:.0f} x ({})", g.batch, mnk) : mnk;
}

std::string operator_table_text(const calibrate::KernelBench& bench, const calibrate::OperatorComparison& c) {
  std::string out = fmt::format("operators of {} on {}:\n", bench.file, bench.gpu_name);
  for (std::size_t i = 0; i < bench.lists.size(); ++i) out += fmt::format("  list {}: {}\n", i, bench.lists[i]);
  out +=
      fmt::format("{:<13} {:>4} {:<32} {:<15} {:<9} {:<28} {:>13} {:>14} {:<8} {:>9}\n", "family", "list", "operator",
                  "pass", "precision", "shape (M x N x K)", "measured (us)", "predicted (us)", "bound", "error %");
  for (const auto& p : c.points) {
    const calibrate::TimedOperator* m = p.measured;
    out += fmt::format("{:<13} {:>4} {:<32} {:<15} {:<9} {:<28} {:>13.2f} {:>14.2f} {:<8} {:>+9.2f}\n",
                       calibrate::to_string(p.family), m ? std::to_string(m->list) : "-", m ? m->name : "empty kernel",
                       m ? cost::to_string(m->pass) : "-", m ? m->precision : "-", m ? shape_text(*m) : "-",
                       p.measured_time.value() * unit::kMega, p.predicted.value() * unit::kMega,
                       cost::to_string(p.bound), p.error_pct);
  }
  for (const auto& m : bench.operators) {
    if (!m.time)
      out += fmt::format("not timed: {} ({}, list {}): {}\n", m.name, cost::to_string(m.pass), m.list, m.skipped);
  }
  out += fmt::format("{:<13} {:>6} {:>8} {:>12} {:>11}\n", "family", "timed", "skipped", "median |e|%", "worst |e|%");
  for (std::size_t i = 0; i < c.families.size(); ++i) {
    const auto& f = c.families[i];
    const auto family = static_cast<calibrate::OperatorFamily>(i);
    if (f.points == 0) {
      out += fmt::format("{:<13} {:>6} {:>8} {:>12} {:>11}\n", calibrate::to_string(family), 0, f.skipped, "-", "-");
    } else {
      out += fmt::format("{:<13} {:>6} {:>8} {:>12.2f} {:>11.2f}\n", calibrate::to_string(family), f.points, f.skipped,
                         f.median_abs_error_pct, f.max_abs_error_pct);
    }
  }
  out += fmt::format("{} timed: |error| median {:.2f}%, p90 {:.2f}%, worst {:.2f}%\n", c.points.size(),
                     c.median_abs_error_pct, c.p90_abs_error_pct, c.max_abs_error_pct);
  return out;
}

nlohmann::json collective_points_json(const calibrate::Comparison& c) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : c.points) {
    points.push_back({{"op", std::string(cost::to_string(p.sample.op))},
                      {"algorithm", p.model},
                      {"ranks", p.sample.tiers.ranks},
                      {"nodes", p.sample.tiers.nodes},
                      {"size_bytes", static_cast<std::int64_t>(p.sample.size.value())},  // exact: sizes are whole bytes
                      {"measured_time_s", sig9(p.sample.measured.value())},
                      {"measured_busbw_Bps", sig9(p.sample.measured_busbw.value())},
                      {"predicted_time_s", sig9(p.predicted.value())},
                      {"predicted_busbw_Bps", sig9(p.predicted_busbw.value())},
                      {"error_pct", sig9(p.error_pct)},
                      {"where", p.sample.where}});
    if (p.predicted_latency.value() > 0.0 || p.predicted_bandwidth_time.value() > 0.0) {
      nlohmann::json& point = points.back();
      point["predicted_latency_s"] = sig9(p.predicted_latency.value());
      point["predicted_bandwidth_time_s"] = sig9(p.predicted_bandwidth_time.value());
      point["network_factors"] = p.network_factors
                                     ? nlohmann::json{{"latency_factor", sig9(p.network_factors->first)},
                                                      {"bandwidth_efficiency", sig9(p.network_factors->second)}}
                                     : nlohmann::json(nullptr);
    }
  }
  return points;
}

nlohmann::json operators_json(const calibrate::KernelBench& bench, const calibrate::OperatorComparison& c) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : c.points) {
    nlohmann::json point = {{"family", calibrate::to_string(p.family)}};
    if (const calibrate::TimedOperator* m = p.measured) {
      point["list"] = m->list;
      point["name"] = m->name;
      point["pass"] = cost::to_string(m->pass);
      point["kind"] = cost::to_string(m->kind);
      point["precision"] = m->precision;
      if (m->kind == cost::OpKind::kMemory) {
        point["elements"] = m->elements;
      } else {
        point["batch"] = m->gemm.batch;
        point["m"] = m->gemm.m;
        point["n"] = m->gemm.n;
        point["k"] = m->gemm.k;
      }
    } else {
      point["name"] = "empty kernel";
    }
    point["measured_time_s"] = sig9(p.measured_time.value());
    point["predicted_time_s"] = sig9(p.predicted.value());
    point["bound"] = cost::to_string(p.bound);
    point["efficiency"] = sig9(p.efficiency);
    point["error_pct"] = sig9(p.error_pct);
    points.push_back(std::move(point));
  }
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& m : bench.operators) {
    if (!m.time)
      skipped.push_back({{"list", m.list}, {"name", m.name}, {"pass", cost::to_string(m.pass)}, {"reason", m.skipped}});
  }
  nlohmann::json families = nlohmann::json::object();
  for (std::size_t i = 0; i < c.families.size(); ++i) {
    const auto& f = c.families[i];
    families[std::string(calibrate::to_string(static_cast<calibrate::OperatorFamily>(i)))] = {
        {"points", f.points},
        {"skipped", f.skipped},
        {"median_abs_error_pct", f.points > 0 ? nlohmann::json(sig9(f.median_abs_error_pct)) : nlohmann::json(nullptr)},
        {"max_abs_error_pct", f.points > 0 ? nlohmann::json(sig9(f.max_abs_error_pct)) : nlohmann::json(nullptr)}};
  }
  return {{"file", bench.file},
          {"gpu", bench.gpu_name},
          {"lists", bench.lists},
          {"points", std::move(points)},
          {"skipped", std::move(skipped)},
          {"families", std::move(families)},
          {"median_abs_error_pct", sig9(c.median_abs_error_pct)},
          {"p90_abs_error_pct", sig9(c.p90_abs_error_pct)},
          {"max_abs_error_pct", sig9(c.max_abs_error_pct)}};
}

// Everything validate compared: the collectives' points and each kernel-bench file's operators.
struct Results {
  calibrate::Comparison collectives;
  std::vector<calibrate::OperatorComparison> operators;  ///< one per MeasuredInputs::kernels entry
  std::vector<calibrate::RowUse> use;                    ///< one per MeasuredInputs::measurements entry
};

// Why validate does not compare a row on the other side of --holdout.
constexpr std::string_view kHoldoutReason = "fitted by calibrate --holdout, not compared";

// Per collective file: rows read, lines skipped by kind (and each line with --verbose), rows used.
nlohmann::json measured_files_json(const MeasuredInputs& in, const std::vector<calibrate::RowUse>& use, bool verbose) {
  nlohmann::json files = nlohmann::json::array();
  for (std::size_t i = 0; i < in.measurements.size(); ++i) {
    const calibrate::Measurements& m = in.measurements[i];
    std::int64_t rows = 0;
    for (const auto& run : m.runs) rows += static_cast<std::int64_t>(run.points.size());
    nlohmann::json skipped = nlohmann::json::object();
    for (const auto& line : m.skipped)
      skipped[skipped_kind_name(line.kind)] = skipped.value(skipped_kind_name(line.kind), 0) + 1;
    nlohmann::json notes = nlohmann::json::array();
    for (const auto& n : m.notes) notes.push_back({{"line", n.line}, {"note", n.text}});
    const calibrate::RowUse& u = use[i];
    nlohmann::json f = {{"file", m.file},
                        {"runs", m.runs.size()},
                        {"rows_read", rows},
                        {"lines_skipped", skipped},
                        {"rows_used", u.used},
                        {"rows_not_used",
                         {{"empty", u.empty},
                          {"outside_sizes", u.outside_sizes},
                          {"holdout", u.holdout},
                          {"single_rank", u.single_rank}}},
                        {"notes", std::move(notes)}};
    if (verbose) {
      f["skipped_lines"] = nlohmann::json::array();
      for (const auto& line : m.skipped) f["skipped_lines"].push_back({{"line", line.line}, {"why", line.why}});
    }
    files.push_back(std::move(f));
  }
  return files;
}

std::string json_text(const Results& r, const MeasuredInputs& in, const std::string& calibration, bool verbose) {
  nlohmann::json j;
  j["topology"] = in.topology.name();
  j["calibration"] = calibration.empty() ? nlohmann::json(nullptr) : nlohmann::json(calibration);
  if (!in.measurements.empty()) j["measured_files"] = measured_files_json(in, r.use, verbose);
  j["points"] = collective_points_json(r.collectives);
  j["median_abs_error_pct"] = sig9(r.collectives.median_abs_error_pct);
  j["p90_abs_error_pct"] = sig9(r.collectives.p90_abs_error_pct);
  j["max_abs_error_pct"] = sig9(r.collectives.max_abs_error_pct);
  if (!in.kernels.empty()) {
    j["operators"] = nlohmann::json::array();
    for (std::size_t i = 0; i < in.kernels.size(); ++i)
      j["operators"].push_back(operators_json(in.kernels[i], r.operators[i]));
  }
  return j.dump(2) + "\n";
}

// Bus bandwidth against message size, measured (solid) and predicted (dashed), one pair of lines
// per collective and rank count: the picture nccl-tests users know, with the model drawn over it.
std::string plot_svg(const calibrate::Comparison& c, const std::string& topology, const std::string& calibration,
                     bool nccl_auto) {
  LineChart chart;
  chart.title = fmt::format("Bus bandwidth on {}: measured and predicted ({}{})", topology,
                            calibration.empty() ? "uncalibrated" : "calibrated", nccl_auto ? ", NCCL's choice" : "");
  chart.x_label = "message size (nccl-tests S)";
  chart.y_label = "bus bandwidth (GB/s)";
  chart.log2_x = true;
  chart.x_bytes = true;
  std::map<std::pair<std::string, int>, std::size_t> first_series;
  for (const auto& p : c.points) {
    const auto key = std::make_pair(std::string(cost::to_string(p.sample.op)), p.sample.tiers.ranks);
    auto [it, added] = first_series.emplace(key, chart.series.size());
    if (added) {
      const std::string name = fmt::format("{} x{}", key.first, key.second);
      const int colour = static_cast<int>(first_series.size() - 1);
      chart.series.push_back({name + " measured", {}, false, colour});
      chart.series.push_back({name + " predicted", {}, true, colour});
    }
    chart.series[it->second].points.push_back({p.sample.size.value(), p.sample.measured_busbw.value() / unit::kGiga});
    chart.series[it->second + 1].points.push_back({p.sample.size.value(), p.predicted_busbw.value() / unit::kGiga});
  }
  return render_svg(chart) + "\n";
}

}  // namespace

ValidateOutput validate_command(const ValidateRequest& o) {
  if (o.in.measured.empty())
    throw InputError("validate", {}, "give --measured FILE (nccl-tests, kernel bench) or --runs FILE (training runs)");
  if (o.in.topology.empty())
    throw InputError("--topology", {}, "--measured needs the topology the measurements ran on");
  ValidateOutput out;
  const MeasuredInputs in = load_measured_inputs(o.in);
  if (!in.eager_host.empty()) {
    throw InputError(in.eager_host.front().file, {},
                     "an eager-host file (scripts/measure-eager-host) measures the host time per kernel launch, which "
                     "`calibrate --measured` turns into host_overhead; validate compares collectives and kernel-bench "
                     "operators");
  }
  const topology::Topology& topo = in.topology;
  const cost::Calibration cal = o.calibration.empty() ? cost::Calibration{} : cost::load_calibration(o.calibration);
  Results r;
  // With a holdout, validate exactly the points that `calibrate --holdout` with the same value left out.
  const bool held_out = in.filter.holdout.kind != calibrate::Holdout::Kind::kNone;
  if (!in.measurements.empty()) {
    const auto samples = calibrate::select_samples(in.measurements, topo, in.filter, held_out, in.algorithm, &r.use);
    if (samples.empty()) {
      throw InputError(in.measurements.front().file, {},
                       "no measured points to compare (check --min-size, --max-size, --holdout)");
    }
    r.collectives = in.nccl_auto ? calibrate::compare_nccl(samples, topo, cal) : calibrate::compare(samples, cal);
  } else if (!o.plot.empty()) {
    throw InputError("--plot", {}, "draws collectives; the measured files hold only kernel-bench operators");
  }
  for (const auto& bench : in.kernels) r.operators.push_back(calibrate::compare_operators(bench, topo.gpu(), cal));

  if (!o.plot.empty()) out.files.push_back({o.plot, plot_svg(r.collectives, topo.name(), o.calibration, in.nccl_auto)});
  if (o.json) {
    out.text = json_text(r, in, o.calibration, o.in.verbose);
  } else {
    std::string text = fmt::format(
        "predicted ({}, {}) vs measured on {}{}\n",
        o.calibration.empty() ? "uncalibrated" : "calibration " + o.calibration,
        o.in.algorithm.empty() ? "default algorithm"
        : in.nccl_auto         ? "NCCL's tuning model picks"
                               : o.in.algorithm,
        topo.name(), held_out ? fmt::format(", points held out by --holdout {}", o.in.holdout) : std::string());
    const bool network_terms = std::any_of(r.collectives.points.begin(), r.collectives.points.end(),
                                           [](const calibrate::ComparedPoint& p) { return p.network_factors; });
    if (network_terms && topo.network()) {
      const topology::NetworkTerms& n = *topo.network();
      text += fmt::format(
          "across nodes NCCL's pick takes the {} terms: latency x {:.3g}, bandwidth x {:.3g}, point-to-point x {:.3g} "
          "({})\n",
          n.name, n.factors.latency_factor, n.factors.bandwidth_efficiency, n.factors.p2p_bandwidth_efficiency, n.file);
    }
    if (!in.measurements.empty()) {
      text += reading_summary(in.measurements, r.use, std::string(kHoldoutReason), o.in.verbose);
      text += table_text(r.collectives);
    }
    for (std::size_t i = 0; i < in.kernels.size(); ++i) text += operator_table_text(in.kernels[i], r.operators[i]);
    if (!o.plot.empty()) text += fmt::format("wrote {}\n", o.plot);
    out.text = text;
  }
  bool passed = r.collectives.median_abs_error_pct <= o.max_median_error;
  for (const auto& c : r.operators) passed = passed && c.median_abs_error_pct <= o.max_median_error;
  out.within_gate = passed;
  return out;
}

}  // namespace stepcast::report
