// `stepcast calibrate`: fits the alpha-beta tier figures to measured collectives (nccl-tests logs
// or stepcast-nccl-bench JSON) and the achieved compute fraction to measured GEMMs
// (stepcast-kernel-bench JSON), and writes a calibration file that --calibration reads.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "measured_options.hpp"
#include "output.hpp"
#include "stepcast/calibrate/fit.hpp"
#include "stepcast/calibrate/fit_nccl.hpp"
#include "stepcast/calibrate/inputs.hpp"
#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/calibrate/validation.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/output_file.hpp"
#include "stepcast/cost/calibration.hpp"

namespace stepcast::cli {
namespace {

struct CalibrateOptions {
  MeasuredOptions in;
  std::string output;
};

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

std::string compute_report(const std::vector<calibrate::ComputeFractionFit>& fits) {
  std::string out = fmt::format("{:<9} {:>6} {:>14} {:>14} {:>9} {:>19}\n", "precision", "GEMMs", "achieved",
                                "peak", "fraction", "per GEMM (min-max)");
  for (const auto& f : fits) {
    out += fmt::format("{:<9} {:>6} {:>14} {:>14} {:>9.3f} {:>19}\n", f.precision, f.gemms,
                       format_flops_rate(f.achieved), format_flops_rate(f.peak), f.fraction,
                       fmt::format("{:.3f}-{:.3f}", f.min_gemm_fraction, f.max_gemm_fraction));
  }
  return out;
}

// Fits NCCL's tuning model per protocol into `cal`; returns the report's lines.
std::string calibrate_nccl(const std::vector<calibrate::Sample>& fitted, const topology::Topology& topo,
                           const std::string& origin, cost::Calibration& cal) {
  if (!cost::nccl_compute_capability(topo.gpu().name)) {
    return fmt::format("NCCL tuning model: not fitted, the GPU name \"{}\" names no generation stepcast knows\n",
                       topo.gpu().name);
  }
  const auto samples = calibrate::nccl_samples(fitted, topo);
  const calibrate::NcclFit fit = calibrate::fit_nccl(samples);
  if (fit.protocols.empty()) {
    return fmt::format("NCCL tuning model: not fitted, no protocol has two points of different sizes ({} points)\n",
                       samples.size());
  }
  calibrate::store_nccl_fit(
      fit, fmt::format("NCCL 2.20.3 tuning model fitted per protocol to {} points of {}", samples.size(), origin), cal);
  std::string out = fmt::format("NCCL tuning model: {} points, each in the protocol NCCL picks ({} rounds)\n",
                                samples.size(), fit.rounds);
  out += fmt::format("{:<9} {:>6} {:>15} {:>21} {:>9} {:>9}\n", "protocol", "points", "latency factor",
                     "bandwidth efficiency", "med |e|%", "max |e|%");
  for (const calibrate::NcclProtocolFit& p : fit.protocols) {
    out += fmt::format("{:<9} {:>6} {:>15.4f} {:>21.4f} {:>9.2f} {:>9.2f}\n", cost::to_string(p.protocol), p.fit.points,
                       p.tuning.latency_factor, p.tuning.bandwidth_efficiency, p.fit.median_abs_error_pct,
                       p.fit.max_abs_error_pct);
  }
  return out;
}

// Fits the collectives' tiers into `cal`; returns the report's lines.
std::string calibrate_collectives(const CalibrateOptions& o, const MeasuredInputs& in, cost::Calibration& cal) {
  const topology::Topology& topo = in.topology;
  const auto fitted = calibrate::select_samples(in.measurements, topo, in.filter, false, in.algorithm);
  if (fitted.empty()) {
    throw InputError(in.measurements.front().file, {},
                     "no measured points left to fit (check --min-size, --max-size, --holdout)");
  }
  const auto fits = calibrate::fit_samples(fitted, in.measurements.front().file);
  for (const auto& f : fits) cal.collectives.push_back(f.entry);
  // What the fit saw: outside it, every command that prices with the file warns.
  cost::FittedRange range{fitted.front().size, fitted.front().size, fitted.front().tiers.ranks, fitted.front().tiers.ranks,
                          fitted.front().tiers.nodes, fitted.front().tiers.nodes};
  for (const calibrate::Sample& s : fitted) {
    range.min_size = std::min(range.min_size, s.size);
    range.max_size = std::max(range.max_size, s.size);
    range.min_ranks = std::min(range.min_ranks, s.tiers.ranks);
    range.max_ranks = std::max(range.max_ranks, s.tiers.ranks);
    range.min_nodes = std::min(range.min_nodes, s.tiers.nodes);
    range.max_nodes = std::max(range.max_nodes, s.tiers.nodes);
  }
  cal.range = range;
  std::string report = fmt::format("fitted {} points on {} ({} GPUs)\n", fitted.size(), topo.name(), topo.gpu_count());
  report += fit_report(fits);
  report += calibrate_nccl(fitted, topo, in.measurements.front().file, cal);
  if (in.filter.holdout.kind != calibrate::Holdout::Kind::kNone) {
    const auto held = calibrate::select_samples(in.measurements, topo, in.filter, true, in.algorithm);
    const calibrate::Comparison c = calibrate::compare(held, cal);
    report += fmt::format("held out ({}): {} points, |error| median {:.2f}%, p90 {:.2f}%, worst {:.2f}%\n", o.in.holdout,
                          c.points.size(), c.median_abs_error_pct, c.p90_abs_error_pct, c.max_abs_error_pct);
  }
  return report;
}

// Fits the achieved compute fractions into `cal`; a later file's precision replaces an earlier one's.
std::string calibrate_compute(const MeasuredInputs& in, cost::Calibration& cal) {
  std::string report;
  for (const calibrate::KernelBench& bench : in.kernels) {
    const auto fits = calibrate::fit_compute_fractions(bench, in.topology.gpu());
    for (const auto& f : fits) cal.compute_fraction[f.precision] = cost::CalibratedFraction{f.fraction, f.source};
    report += fmt::format("compute: {} GEMMs of {} on {} ({}), against {} peaks\n", bench.gemms.size(), bench.file,
                          bench.gpu_name, bench.compute_capability, in.topology.gpu().name);
    report += compute_report(fits);
    for (const auto& [precision, why] : bench.skipped) report += fmt::format("{:<9} {}\n", precision, why);
  }
  return report;
}

void run_calibrate(const CalibrateOptions& o) {
  const MeasuredInputs in = load_measured_inputs(o.in);
  if (in.nccl_auto) {
    throw InputError("--algorithm", {}, "calibrate always fits NCCL's tuning model too; auto applies to validate and collective");
  }
  cost::Calibration cal;
  std::string inputs;
  for (const std::string& f : o.in.measured) inputs += (inputs.empty() ? "" : ", ") + f;
  cal.source = fmt::format("stepcast calibrate: {} on topology {} (holdout {}), from {}",
                           "alpha-beta and NCCL-protocol least squares and GEMM rates", in.topology.name(), o.in.holdout,
                           inputs);
  std::string report;
  if (!in.measurements.empty()) report += calibrate_collectives(o, in, cal);
  if (!in.kernels.empty()) report += calibrate_compute(in, cal);
  write_file_atomically(o.output, cost::to_json_text(cal));
  report += fmt::format("wrote {}\n", o.output);
  emit(report, "");
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Fit the latency (alpha) and bandwidth of the fabric tiers that measured collectives exercise,\n"
      "per collective and message-size regime, by least squares on relative error, and NCCL's tuning\n"
      "model's latency factor and bandwidth efficiency per protocol; write a calibration\n"
      "file for --calibration. Measurements: nccl-tests logs or stepcast-nccl-bench JSON. From\n"
      "stepcast-kernel-bench JSON, the achieved fraction of the topology GPU's peak per precision.");
  add_measured_options(*cmd, options->in, "Fit",
                       "Points left out of the fit and reported: none, every-other (odd-indexed sizes), sizes>=SIZE, ranks=N");
  cmd->add_option("-o,--output", options->output, "Calibration file to write")->required();
  cmd->callback([options] { run_calibrate(*options); });
}

}  // namespace stepcast::cli
