// `stepcast calibrate`: fits the alpha-beta tier figures to measured collectives (nccl-tests logs
// or stepcast-nccl-bench JSON) and writes a calibration file that --calibration reads.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "data_path.hpp"
#include "output.hpp"
#include "stepcast/calibrate/fit.hpp"
#include "stepcast/calibrate/inputs.hpp"
#include "stepcast/calibrate/validation.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/output_file.hpp"
#include "stepcast/cost/calibration.hpp"

namespace stepcast::cli {
namespace {

struct CalibrateOptions {
  std::vector<std::string> measured;
  std::string topology;
  int nodes = 0;
  std::string algorithm;
  std::string min_size;
  std::string max_size;
  std::string holdout = "none";
  std::string output;
};

Bytes size_option(const std::string& option, const std::string& text) {
  try {
    return parse_bytes(text);
  } catch (const UnitError& e) {
    throw InputError(option, {}, e.what());
  }
}

std::optional<cost::Algorithm> algorithm_option(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const auto a = cost::parse_algorithm(text);
  if (!a) throw InputError("--algorithm", {}, fmt::format("unknown algorithm \"{}\"; accepted: {}", text, cost::accepted_algorithms()));
  return a;
}

calibrate::PointFilter filter_of(const CalibrateOptions& o) {
  calibrate::PointFilter f;
  if (!o.min_size.empty()) f.min_size = size_option("--min-size", o.min_size);
  if (!o.max_size.empty()) f.max_size = size_option("--max-size", o.max_size);
  f.holdout = calibrate::Holdout::parse(o.holdout);
  return f;
}

std::string fit_report(const std::vector<calibrate::RegimeFit>& fits) {
  std::string out = fmt::format("{:<16} {:<6} {:>10} {:>10} {:>6}  {:<15} {:>12}  {:<12} {:>12}  {:>9} {:>9}\n",
                                "collective", "algo", "from", "to", "points", "alpha field", "alpha",
                                "bw field", "bandwidth", "med |e|%", "max |e|%");
  for (const auto& f : fits) {
    const auto& e = f.entry;
    out += fmt::format("{:<16} {:<6} {:>10} {:>10} {:>6}  {:<15} {:>12}  {:<12} {:>12}  {:>9.2f} {:>9.2f}\n",
                       cost::to_string(e.op), cost::to_string(f.algorithm),
                       format_bytes(e.min_size), e.max_size ? format_bytes(*e.max_size) : std::string("-"), e.fit->points,
                       f.alpha_field, format_seconds(f.alpha), f.bandwidth_field, format_bandwidth(f.bandwidth),
                       e.fit->median_abs_error_pct, e.fit->max_abs_error_pct);
  }
  return out;
}

void run_calibrate(const CalibrateOptions& o, std::optional<int> nodes) {
  std::vector<std::filesystem::path> files;
  for (const std::string& f : o.measured) files.emplace_back(f);
  const auto measurements = calibrate::read_all_measurements(files);
  const topology::Topology topo = calibrate::topology_for(data_path(o.topology), nodes, measurements);
  const calibrate::PointFilter filter = filter_of(o);
  const auto algorithm = algorithm_option(o.algorithm);
  const auto fitted = calibrate::select_samples(measurements, topo, filter, false, algorithm);
  if (fitted.empty()) {
    throw InputError(o.measured.front(), {}, "no measured points left to fit (check --min-size, --max-size, --holdout)");
  }
  const auto fits = calibrate::fit_samples(fitted, o.measured.front());

  cost::Calibration cal;
  std::string inputs;
  for (const std::string& f : o.measured) inputs += (inputs.empty() ? "" : ", ") + f;
  cal.source = fmt::format("stepcast calibrate: {} on topology {} (holdout {}), from {}", "alpha-beta least squares",
                           topo.name(), o.holdout, inputs);
  for (const auto& f : fits) cal.collectives.push_back(f.entry);
  write_file_atomically(o.output, cost::to_json_text(cal));

  std::string report = fmt::format("fitted {} points on {} ({} GPUs)\n", fitted.size(), topo.name(), topo.gpu_count());
  report += fit_report(fits);
  if (filter.holdout.kind != calibrate::Holdout::Kind::kNone) {
    const auto held = calibrate::select_samples(measurements, topo, filter, true, algorithm);
    const calibrate::Comparison c = calibrate::compare(held, cal);
    report += fmt::format("held out ({}): {} points, |error| median {:.2f}%, p90 {:.2f}%, worst {:.2f}%\n", o.holdout,
                          c.points.size(), c.median_abs_error_pct, c.p90_abs_error_pct, c.max_abs_error_pct);
  }
  report += fmt::format("wrote {}\n", o.output);
  emit(report, "");
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit the latency (alpha) and bandwidth of the fabric tiers that measured collectives exercise,\n"
      "per collective and message-size regime, by least squares on relative error; write a calibration\n"
      "file for --calibration. Measurements: nccl-tests logs or stepcast-nccl-bench JSON.");
  cmd->add_option("--measured", options->measured, "nccl-tests log or stepcast-nccl-bench JSON (repeatable)")
      ->required()
      ->expected(1, -1);
  cmd->add_option("--topology", options->topology, "Topology the measurements ran on, e.g. topologies/dgx-h100.json")->required();
  CLI::Option* nodes = cmd->add_option("--nodes", options->nodes, "Node count of a cluster-form topology (default: what the runs need)");
  cmd->add_option("--algorithm", options->algorithm, "Algorithm to fit (default: each collective's default, ring)");
  cmd->add_option("--min-size", options->min_size, "Fit only sizes >= this, e.g. 1MiB");
  cmd->add_option("--max-size", options->max_size, "Fit only sizes <= this");
  cmd->add_option("--holdout", options->holdout,
                  "Points left out of the fit and reported: none, every-other (odd-indexed sizes), sizes>=SIZE, ranks=N");
  cmd->add_option("-o,--output", options->output, "Calibration file to write")->required();
  cmd->callback([options, nodes] {
    run_calibrate(*options, nodes->count() > 0 ? std::optional<int>(options->nodes) : std::nullopt);
  });
}

}  // namespace stepcast::cli
