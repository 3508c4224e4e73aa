// `stepcast calibrate --measured`: fits the alpha-beta tier figures to measured collectives
// (nccl-tests logs or stepcast-nccl-bench JSON), NCCL's tuning model per protocol, and the compute
// model's kernel parameters to measured operators (stepcast-kernel-bench JSON).
#include "stepcast/report/calibrate_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "stepcast/calibrate/eager_host.hpp"
#include "stepcast/calibrate/fit.hpp"
#include "stepcast/calibrate/fit_nccl.hpp"
#include "stepcast/calibrate/inputs.hpp"
#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/calibrate/validation.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/calibration.hpp"
#include "stepcast/report/reading_summary.hpp"

namespace stepcast::report {
namespace {

std::string fit_report(const std::vector<calibrate::RegimeFit>& fits) {
  std::string out =
      fmt::format("{:<16} {:<6} {:>10} {:>10} {:>6}  {:<15} {:>12}  {:<12} {:>12}  {:>9} {:>9}\n", "collective", "algo",
                  "from", "to", "points", "alpha field", "alpha", "bw field", "bandwidth", "med |e|%", "max |e|%");
  for (const auto& f : fits) {
    const auto& e = f.entry;
    out += fmt::format("{:<16} {:<6} {:>10} {:>10} {:>6}  {:<15} {:>12}  {:<12} {:>12}  {:>9.2f} {:>9.2f}\n",
                       cost::to_string(e.op), cost::to_string(f.algorithm), format_bytes(e.min_size),
                       e.max_size ? format_bytes(*e.max_size) : std::string("-"), e.fit->points, f.alpha_field,
                       format_seconds(f.alpha), f.bandwidth_field, format_bandwidth(f.bandwidth),
                       e.fit->median_abs_error_pct, e.fit->max_abs_error_pct);
  }
  return out;
}

std::string compute_report(const std::vector<calibrate::GemmEfficiencyFit>& fits) {
  std::string out = fmt::format("{:<9} {:>6} {:>14} {:>14} {:>11} {:>19} {:>14}\n", "precision", "GEMMs", "achieved",
                                "peak", "efficiency", "per GEMM (min-max)", "memory-bound");
  for (const auto& f : fits) {
    out += fmt::format("{:<9} {:>6} {:>14} {:>14} {:>11.3f} {:>19} {:>14}\n", f.precision, f.gemms,
                       format_flops_rate(f.flops / f.time), format_flops_rate(f.peak), f.efficiency,
                       fmt::format("{:.3f}-{:.3f}", f.min_gemm_efficiency, f.max_gemm_efficiency), f.memory_bound);
  }
  out +=
      "(memory-bound: GEMMs whose bytes at the datasheet bandwidth outlast their FLOPs at the peak, left out of the "
      "fit)\n";
  return out;
}

// Fits NCCL's tuning model per protocol into `cal`; returns the report's lines.
std::string calibrate_nccl(const std::vector<calibrate::Sample>& fitted, const topology::Topology& topo,
                           const std::string& origin, cost::Calibration& cal) {
  if (!cost::nccl_compute_capability(topo.gpu())) {
    return fmt::format("NCCL tuning model: not fitted, the {} block states no compute capability\n", topo.gpu().name);
  }
  const auto samples = calibrate::nccl_samples(fitted, topo);
  const calibrate::NcclFit fit = calibrate::fit_nccl(samples);
  if (fit.protocols.empty()) {
    return fmt::format("NCCL tuning model: not fitted, no protocol has two points of different sizes ({} points)\n",
                       samples.size());
  }
  calibrate::store_nccl_fit(
      fit, fmt::format("NCCL 2.29 tuning model fitted per protocol to {} points of {}", samples.size(), origin), cal);
  std::string out = fmt::format(
      "NCCL tuning model: {} points; the best of {} rounds of fitting each protocol to the points NCCL picks it for; "
      "points and errors (fit residuals) as NCCL picks under the fitted factors\n",
      samples.size(), fit.rounds);
  out += fmt::format("{:<9} {:>6} {:>15} {:>21} {:>9} {:>9}\n", "protocol", "points", "latency factor",
                     "bandwidth efficiency", "med |e|%", "max |e|%");
  for (const calibrate::NcclProtocolFit& p : fit.protocols) {
    if (p.fit) {
      out += fmt::format("{:<9} {:>6} {:>15.4f} {:>21.4f} {:>9.2f} {:>9.2f}\n", cost::to_string(p.protocol),
                         p.fit->points, p.tuning.latency_factor, p.tuning.bandwidth_efficiency,
                         p.fit->median_abs_error_pct, p.fit->max_abs_error_pct);
    } else {
      out += fmt::format("{:<9} {:>6} {:>15.4f} {:>21.4f} {:>9} {:>9}\n", cost::to_string(p.protocol), 0,
                         p.tuning.latency_factor, p.tuning.bandwidth_efficiency, "-", "-");
    }
  }
  return out;
}

// Fits the collectives' tiers into `cal`; returns the report's lines.
std::string calibrate_collectives(const MeasuredOptions& o, const MeasuredInputs& in, cost::Calibration& cal) {
  const topology::Topology& topo = in.topology;
  std::vector<calibrate::RowUse> use;
  const auto fitted = calibrate::select_samples(in.measurements, topo, in.filter, false, in.algorithm, &use);
  if (fitted.empty()) {
    throw InputError(in.measurements.front().file, {},
                     "no measured points left to fit (check --min-size, --max-size, --holdout)");
  }
  const auto fits = calibrate::fit_samples(fitted, in.measurements.front().file);
  for (const auto& f : fits) cal.collectives.push_back(f.entry);
  // What the fit saw: outside it, every command that prices with the file warns.
  cost::FittedRange range{fitted.front().size,        fitted.front().size,        fitted.front().tiers.ranks,
                          fitted.front().tiers.ranks, fitted.front().tiers.nodes, fitted.front().tiers.nodes};
  for (const calibrate::Sample& s : fitted) {
    range.min_size = std::min(range.min_size, s.size);
    range.max_size = std::max(range.max_size, s.size);
    range.min_ranks = std::min(range.min_ranks, s.tiers.ranks);
    range.max_ranks = std::max(range.max_ranks, s.tiers.ranks);
    range.min_nodes = std::min(range.min_nodes, s.tiers.nodes);
    range.max_nodes = std::max(range.max_nodes, s.tiers.nodes);
  }
  cal.range = range;
  std::string report = reading_summary(in.measurements, use, "held out by --holdout", o.verbose);
  // The ranks and nodes of the measured runs, not the topology file's default node count.
  const auto span = [](int lo, int hi, std::string_view noun) {
    return lo == hi ? fmt::format("{} {}{}", lo, noun, lo == 1 ? "" : "s") : fmt::format("{}-{} {}s", lo, hi, noun);
  };
  report += fmt::format("fitted {} points on {} ({} on {})\n", fitted.size(), topo.name(),
                        span(range.min_ranks, range.max_ranks, "rank"), span(range.min_nodes, range.max_nodes, "node"));
  report += fit_report(fits);
  report += calibrate_nccl(fitted, topo, in.measurements.front().file, cal);
  if (in.filter.holdout.kind != calibrate::Holdout::Kind::kNone) {
    const auto held = calibrate::select_samples(in.measurements, topo, in.filter, true, in.algorithm);
    const calibrate::Comparison c = calibrate::compare(held, cal);
    report += fmt::format("held out ({}): {} points, |error| median {:.2f}%, p90 {:.2f}%, worst {:.2f}%\n", o.holdout,
                          c.points.size(), c.median_abs_error_pct, c.p90_abs_error_pct, c.max_abs_error_pct);
  }
  return report;
}

std::string memory_report(const calibrate::MemoryEfficiencyFit& f, const topology::GpuSpec& gpu) {
  std::string out = fmt::format("{:<12} {:>9} {:>14} {:>14} {:>11} {:>24}\n", "memory-bound", "operators", "achieved",
                                "datasheet", "efficiency", "per operator (min-max)");
  out += fmt::format("{:<12} {:>9} {:>14} {:>14} {:>11.3f} {:>24}\n", "", f.operators,
                     format_bandwidth(f.bytes / f.time), format_bandwidth(gpu.memory_bandwidth), f.efficiency,
                     fmt::format("{:.3f}-{:.3f}", f.min_operator_efficiency, f.max_operator_efficiency));
  return out;
}

// Fits the compute model's kernel parameters from one stepcast-kernel-bench file into `cal`:
// the launch overheads first, since the GEMM and memory fits take them off each measured time.
// A later file's figures replace an earlier one's.
std::string calibrate_kernels(const calibrate::KernelBench& bench, const topology::GpuSpec& gpu,
                              cost::Calibration& cal) {
  if (!cal.compute) cal.compute = cost::ComputeCalibration{};
  cost::ComputeCalibration& c = *cal.compute;
  int timed = 0;
  int attention_skipped = 0;
  std::string attention_reason;
  for (const auto& op : bench.operators) {
    timed += op.time ? 1 : 0;
    if (op.kind == cost::OpKind::kFusedAttention && !op.time) {
      ++attention_skipped;
      attention_reason = op.skipped;
    }
  }
  std::string report =
      fmt::format("compute: {} operators of {} on {} ({}): {} timed, {} skipped; against the {}'s datasheet figures\n",
                  bench.operators.size(), bench.file, bench.gpu_name, bench.compute_capability, timed,
                  bench.operators.size() - static_cast<std::size_t>(timed), gpu.name);
  std::vector<std::string> sources;
  // The bench's kernels run alone, so the GPU's own gap between kernels is what their times hold
  // beyond the roofline: the empty kernel's, where measured. It and the launch time are reported,
  // not written: the model's overheads carry a framework's per-operator time (calibrate --runs).
  plan::Plan probe;
  Seconds overhead = cost::kernel_params(cal, gpu, probe).kernel_overhead;
  if (const auto launch = calibrate::fit_launch_overheads(bench)) {
    overhead = launch->kernel_overhead;
    report += fmt::format(
        "{:<16} {:>10}  GPU time per empty kernel, {} back to back (used below; not written: the model's kernel "
        "overhead carries a framework's per-operator time, fit it with calibrate --runs)\n",
        "empty kernel", format_seconds(launch->kernel_overhead), bench.launch->kernels);
    report += fmt::format("{:<16} {:>10}  host time per launch call, {} calls: the CUDA runtime alone, reported only\n",
                          "launch", format_seconds(launch->host_overhead), bench.launch->launches);
  }
  const auto gemms = calibrate::fit_gemm_efficiencies(bench, gpu, overhead);
  for (const auto& f : gemms) {
    c.gemm_efficiency[f.precision] = f.efficiency;
    c.fitted_on["gemm_efficiency." + f.precision] = f.source;
  }
  if (!gemms.empty()) {
    report += compute_report(gemms);
    sources.push_back("GEMM efficiency per precision");
  }
  if (const auto memory = calibrate::fit_memory_efficiency(bench, gpu, overhead)) {
    c.memory_efficiency = memory->efficiency;
    c.fitted_on["memory_efficiency"] = memory->source;
    report += memory_report(*memory, gpu);
    sources.push_back("HBM efficiency");
  }
  if (attention_skipped > 0) {
    report += fmt::format(
        "attention: not fitted, the bench skipped its {} fused-attention operators ({}); the cited FlashAttention "
        "efficiencies stay\n",
        attention_skipped, attention_reason);
  }
  std::string fitted;
  for (const auto& s : sources) fitted += (fitted.empty() ? "" : ", ") + s;
  c.source += fmt::format("{}stepcast-kernel-bench {} on {}: {}", c.source.empty() ? "" : "; ", bench.file,
                          bench.gpu_name, fitted.empty() ? std::string("nothing fitted") : fitted);
  return report;
}

// host_overhead from eager PyTorch layers into `cal`; returns the report's lines.
std::string calibrate_host(const std::vector<calibrate::EagerHostFile>& files, cost::Calibration& cal) {
  std::size_t shapes = 0;
  for (const calibrate::EagerHostFile& f : files) shapes += f.shapes.size();
  const auto fit = calibrate::fit_host_overhead(files);
  if (!fit) {
    return fmt::format(
        "host overhead: not fitted, none of the {} timed shapes is host-bound (the GPU, not the host, set their "
        "time)\n",
        shapes);
  }
  if (!cal.compute) cal.compute = cost::ComputeCalibration{};
  cal.compute->host_overhead = fit->host_overhead;
  cal.compute->fitted_on["host_overhead"] = fit->source;
  cal.compute->source += fmt::format("{}eager PyTorch layers: host overhead", cal.compute->source.empty() ? "" : "; ");
  std::string out = fmt::format(
      "host overhead: {} of {} shapes host-bound; each one's host issue time per layer over the launches the model "
      "counts for that layer\n",
      fit->rows.size(), shapes);
  std::size_t width = 4;
  for (const calibrate::HostPerLaunch& r : fit->rows) width = std::max(width, r.file.size());
  out += fmt::format("{:<{}} {:>7} {:>6} {:>9} {:>4} {:>7} {:>10} {:>12} {:>9} {:>14}\n", "file", width, "hidden",
                     "heads", "sequence", "mbs", "layers", "recompute", "issue/layer", "launches", "per launch");
  for (const calibrate::HostPerLaunch& r : fit->rows) {
    out += fmt::format(
        "{:<{}} {:>7} {:>6} {:>9} {:>4} {:>7} {:>10} {:>12} {:>9.0f} {:>11.3f} us\n", r.file, width, r.layer.hidden,
        r.layer.heads, r.layer.sequence, r.layer.micro_batch, r.layer.layers, r.layer.full_recompute ? "full" : "none",
        format_seconds(r.layer.issue / static_cast<double>(r.layer.layers)), r.launches, r.per_launch.value() * 1e6);
  }
  out += fmt::format("host overhead {} (the median; written)\n", format_seconds(fit->host_overhead));
  return out;
}

}  // namespace

CalibrateOutput calibrate_command(const MeasuredOptions& o) {
  if (o.measured.empty())
    throw InputError("calibrate", {}, "give --measured FILE (nccl-tests, benches) or --runs FILE (training runs)");
  if (o.topology.empty()) throw InputError("--topology", {}, "--measured needs the topology the measurements ran on");
  const MeasuredInputs in = load_measured_inputs(o);
  if (in.nccl_auto) {
    throw InputError("--algorithm", {},
                     "calibrate always fits NCCL's tuning model too; auto applies to validate and collective");
  }
  cost::Calibration cal;
  std::string inputs;
  for (const std::string& f : o.measured) inputs += (inputs.empty() ? "" : ", ") + f;
  cal.source = fmt::format("stepcast calibrate: {} on topology {} (holdout {}), from {}",
                           "alpha-beta and NCCL-protocol least squares and kernel-bench operator times",
                           in.topology.name(), o.holdout, inputs);
  std::string report;
  if (!in.measurements.empty()) report += calibrate_collectives(o, in, cal);
  for (const calibrate::KernelBench& bench : in.kernels) report += calibrate_kernels(bench, in.topology.gpu(), cal);
  if (!in.eager_host.empty()) report += calibrate_host(in.eager_host, cal);
  return {cost::to_json_text(cal), report};
}

}  // namespace stepcast::report
