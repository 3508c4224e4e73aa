// The compute model's asymptotic GEMM efficiency from measured GEMMs (batched ones too), per
// precision: each GEMM's time is modelled as FLOPs / (peak x efficiency x its tile/wave
// quantization) + the kernel overhead, and the efficiency that reproduces the summed measured
// time is solved for.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::calibrate {
namespace {

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
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

Seconds quantized_peak_time(const TimedOperator& g, const topology::GpuSpec& gpu, FlopsPerSecond peak) {
  return g.flops / (peak * cost::gemm_quantization(g.gemm, gpu.sm_count));
}

std::vector<GemmEfficiencyFit> fit_gemm_efficiencies(const KernelBench& bench, const topology::GpuSpec& gpu,
                                                     Seconds kernel_overhead) {
  require_same_gpu_model(bench, gpu);
  std::vector<GemmEfficiencyFit> fits;
  for (const TimedOperator& g : bench.operators) {
    if (g.kind != cost::OpKind::kGemm || !g.time) continue;
    auto it = std::find_if(fits.begin(), fits.end(), [&](const auto& f) { return f.precision == g.precision; });
    if (it == fits.end()) {
      GemmEfficiencyFit f;
      f.precision = g.precision;
      f.peak = cost::peak_rate(gpu, plan::parse_precision(g.precision, bench.file));
      if (!(f.peak.value() > 0.0)) {
        throw InputError(bench.file, {},
                         fmt::format("{} GEMMs were measured but the topology's {} has no {} peak", g.precision,
                                     gpu.name, g.precision));
      }
      fits.push_back(f);
      it = std::prev(fits.end());
    }
    const Seconds ideal = quantized_peak_time(g, gpu, it->peak);
    // A GEMM whose bytes at the datasheet bandwidth outlast its FLOPs at the peak (attention's
    // score products over short heads) is memory-bound in the model: its time says nothing
    // about the tensor cores.
    if (gpu.memory_bandwidth.value() > 0.0 && g.bytes / gpu.memory_bandwidth > ideal) {
      ++it->memory_bound;
      continue;
    }
    const Seconds busy = *g.time - kernel_overhead * g.kernels;
    const double gemm_efficiency = ideal / busy;
    it->min_gemm_efficiency = it->gemms == 0 ? gemm_efficiency : std::min(it->min_gemm_efficiency, gemm_efficiency);
    it->max_gemm_efficiency = std::max(it->max_gemm_efficiency, gemm_efficiency);
    it->ideal += ideal;
    it->busy += busy;
    it->flops += g.flops;
    it->time += *g.time;
    ++it->gemms;
  }
  std::erase_if(fits, [](const GemmEfficiencyFit& f) { return f.gemms == 0; });
  for (GemmEfficiencyFit& f : fits) {
    f.efficiency = f.busy.value() > 0.0 ? f.ideal / f.busy : 2.0;
    if (f.efficiency > 1.0) {
      throw InputError(
          bench.file, {},
          fmt::format("{} GEMMs ran at {:.1f} TFLOP/s, above what the topology's {} peak of {:.1f} TFLOP/s "
                      "allows for their shapes: check the topology's gpu.peak and gpu.sm_count",
                      f.precision, (f.flops / f.time).value() / unit::kTera, gpu.name, f.peak.value() / unit::kTera));
    }
    f.source =
        fmt::format("stepcast-kernel-bench {}: {} {} GEMMs of {} operator list(s) on {}, {:.1f} TFLOP/s of {:.1f}",
                    bench.file, f.gemms, f.precision, bench.lists.size(), bench.gpu_name,
                    (f.flops / f.time).value() / unit::kTera, f.peak.value() / unit::kTera);
  }
  return fits;
}

}  // namespace stepcast::calibrate
