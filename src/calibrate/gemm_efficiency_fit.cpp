// The achieved fraction of the datasheet peak from measured GEMMs, per precision.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/compute.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::calibrate {
namespace {

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return text;
}

// "H100-SXM5-80GB" -> "H100".
std::string model_token(const std::string& name) { return upper(name.substr(0, name.find_first_of("- "))); }

}  // namespace

void require_same_gpu_model(const KernelBench& bench, const topology::GpuSpec& gpu) {
  const std::string model = model_token(gpu.name);
  if (model.empty() || upper(bench.gpu_name).find(model) == std::string::npos) {
    throw InputError(bench.file, "/gpu/name",
                     fmt::format("measured on \"{}\" but the topology's GPU is \"{}\"; use a topology with that GPU",
                                 bench.gpu_name, gpu.name));
  }
}

std::vector<ComputeFractionFit> fit_compute_fractions(const KernelBench& bench, const topology::GpuSpec& gpu) {
  require_same_gpu_model(bench, gpu);
  std::vector<ComputeFractionFit> fits;
  for (const GemmTiming& g : bench.gemms) {
    auto it = std::find_if(fits.begin(), fits.end(), [&](const auto& f) { return f.precision == g.precision; });
    if (it == fits.end()) {
      ComputeFractionFit f;
      f.precision = g.precision;
      f.peak = cost::peak_rate(gpu, plan::parse_precision(g.precision, bench.file));
      if (!(f.peak.value() > 0.0)) {
        throw InputError(bench.file, {}, fmt::format("{} GEMMs were measured but the topology's {} has no {} peak",
                                                     g.precision, gpu.name, g.precision));
      }
      fits.push_back(f);
      it = std::prev(fits.end());
    }
    const double gemm_fraction = g.flops.value() / g.time.value() / it->peak.value();
    it->min_gemm_fraction = it->gemms == 0 ? gemm_fraction : std::min(it->min_gemm_fraction, gemm_fraction);
    it->max_gemm_fraction = std::max(it->max_gemm_fraction, gemm_fraction);
    it->flops += g.flops;
    it->time += g.time;
    ++it->gemms;
  }
  for (ComputeFractionFit& f : fits) {
    f.achieved = FlopsPerSecond(f.flops.value() / f.time.value());
    f.fraction = f.achieved.value() / f.peak.value();
    if (f.fraction > 1.0) {
      throw InputError(bench.file, {}, fmt::format("{} GEMMs ran at {:.1f} TFLOP/s, above the topology's {} peak of "
                                                   "{:.1f} TFLOP/s: check the topology's gpu.peak",
                                                   f.precision, f.achieved.value() / unit::kTera, gpu.name,
                                                   f.peak.value() / unit::kTera));
    }
    f.source = fmt::format("stepcast-kernel-bench {}: {} {} GEMMs of a layer of {} tokens on {}, {:.1f} TFLOP/s of {:.1f}",
                           bench.file, f.gemms, f.precision, bench.tokens, bench.gpu_name,
                           f.achieved.value() / unit::kTera, f.peak.value() / unit::kTera);
  }
  return fits;
}

}  // namespace stepcast::calibrate
