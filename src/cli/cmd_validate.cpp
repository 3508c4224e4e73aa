// `stepcast validate`: predicted against measured for every point of nccl-tests logs or
// stepcast-nccl-bench JSON, with the error of each and the median, p90 and worst error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "measured_options.hpp"
#include "output.hpp"
#include "stepcast/calibrate/fit.hpp"
#include "stepcast/calibrate/inputs.hpp"
#include "stepcast/calibrate/validation.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/calibration.hpp"

namespace stepcast::cli {
namespace {

struct ValidateOptions {
  MeasuredOptions in;
  std::string calibration;
  double max_median_error = 0.0;
  bool json = false;
  std::string output;
};

// JSON numbers with 9 significant digits (STYLE.md B6).
double sig9(double v) { return std::strtod(fmt::format("{:.9g}", v).c_str(), nullptr); }

std::string table_text(const calibrate::Comparison& c, const std::string& header) {
  std::string out = header;
  out += fmt::format("{:<14} {:>13} {:>10} {:>14} {:>14} {:>14} {:>14} {:>9}\n", "collective", "size (B)", "size",
                     "measured (us)", "meas busbw", "predicted (us)", "pred busbw", "error %");
  for (const auto& p : c.points) {
    out += fmt::format("{:<14} {:>13.0f} {:>10} {:>14.2f} {:>14} {:>14.2f} {:>14} {:>+9.2f}\n",
                       cost::to_string(p.sample.op), p.sample.size.value(), format_bytes(p.sample.size),
                       p.sample.measured.value() * unit::kMega, format_bandwidth(p.sample.measured_busbw),
                       p.predicted.value() * unit::kMega, format_bandwidth(p.predicted_busbw), p.error_pct);
  }
  out += fmt::format("{} points: |error| median {:.2f}%, p90 {:.2f}%, worst {:.2f}%\n", c.points.size(),
                     c.median_abs_error_pct, c.p90_abs_error_pct, c.max_abs_error_pct);
  return out;
}

std::string json_text(const calibrate::Comparison& c, const std::string& topology, const std::string& calibration) {
  nlohmann::json j;
  j["topology"] = topology;
  j["calibration"] = calibration.empty() ? nlohmann::json(nullptr) : nlohmann::json(calibration);
  j["points"] = nlohmann::json::array();
  for (const auto& p : c.points) {
    j["points"].push_back({{"op", std::string(cost::to_string(p.sample.op))},
                           {"algorithm", std::string(cost::to_string(p.sample.algorithm))},
                           {"ranks", p.sample.tiers.ranks},
                           {"nodes", p.sample.tiers.nodes},
                           {"size_bytes", sig9(p.sample.size.value())},
                           {"measured_time_s", sig9(p.sample.measured.value())},
                           {"measured_busbw_Bps", sig9(p.sample.measured_busbw.value())},
                           {"predicted_time_s", sig9(p.predicted.value())},
                           {"predicted_busbw_Bps", sig9(p.predicted_busbw.value())},
                           {"error_pct", sig9(p.error_pct)},
                           {"where", p.sample.where}});
  }
  j["median_abs_error_pct"] = sig9(c.median_abs_error_pct);
  j["p90_abs_error_pct"] = sig9(c.p90_abs_error_pct);
  j["max_abs_error_pct"] = sig9(c.max_abs_error_pct);
  return j.dump(2) + "\n";
}

// Returns whether the gate (--max-median-error) passed.
bool run_validate(const ValidateOptions& o, bool gate) {
  const MeasuredInputs in = load_measured_inputs(o.in);
  const topology::Topology& topo = in.topology;
  const cost::Calibration cal = o.calibration.empty() ? cost::Calibration{} : cost::load_calibration(o.calibration);
  // With a holdout, validate exactly the points that `calibrate --holdout` with the same value left out.
  const bool held_out = in.filter.holdout.kind != calibrate::Holdout::Kind::kNone;
  const auto samples = calibrate::select_samples(in.measurements, topo, in.filter, held_out, in.algorithm);
  if (samples.empty()) {
    throw InputError(o.in.measured.front(), {}, "no measured points to compare (check --min-size, --max-size, --holdout)");
  }
  const calibrate::Comparison c = calibrate::compare(samples, cal);
  if (o.json) {
    emit(json_text(c, topo.name(), o.calibration), o.output);
  } else {
    const std::string header = fmt::format(
        "predicted ({}, {}) vs measured on {}{}\n", o.calibration.empty() ? "uncalibrated" : "calibration " + o.calibration,
        o.in.algorithm.empty() ? "default algorithm" : o.in.algorithm, topo.name(),
        held_out ? fmt::format(", points held out by --holdout {}", o.in.holdout) : std::string());
    emit(table_text(c, header), o.output);
  }
  return !gate || c.median_abs_error_pct <= o.max_median_error;
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate",
      "Compare the model's predicted collective times with measured ones (nccl-tests logs or\n"
      "stepcast-nccl-bench JSON): a table of every point with its error, then the median, 90th\n"
      "percentile and worst absolute error. Exit 1 when --max-median-error is exceeded.");
  add_measured_options(*cmd, options->in, "Compare",
                       "Compare only the points `calibrate --holdout` with the same value left out of its fit");
  cmd->add_option("--calibration", options->calibration, "Calibration file from `stepcast calibrate`");
  CLI::Option* gate = cmd->add_option("--max-median-error", options->max_median_error,
                                      "Exit 1 when the median absolute error (percent) exceeds this");
  cmd->add_flag("--json", options->json, "Print one JSON object: points, median/p90/max_abs_error_pct");
  cmd->add_option("-o,--output", options->output, "Write the output to FILE (atomically) instead of stdout");
  cmd->callback([options, gate] {
    const bool passed = run_validate(*options, gate->count() > 0);
    if (!passed) {
      fmt::print(stderr, "stepcast: validate: median |error| above --max-median-error {}%\n", options->max_median_error);
      // Exit code 1 is the gate's verdict, not an error class of main's table.
      std::fflush(stdout);
      std::exit(1);
    }
  });
}

}  // namespace stepcast::cli
