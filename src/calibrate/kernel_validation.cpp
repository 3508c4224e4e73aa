// Measured GEMMs against the model's compute time for them.
#include <fmt/format.h>

#include <cmath>

#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/calibrate/validation.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/compute.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::calibrate {

GemmComparison compare_gemms(const KernelBench& bench, const topology::GpuSpec& gpu, const cost::Calibration& calibration) {
  require_same_gpu_model(bench, gpu);
  std::vector<ComparedGemm> points;
  std::vector<double> abs_err;
  for (const GemmTiming& g : bench.gemms) {
    const plan::Precision precision = plan::parse_precision(g.precision, bench.file);
    ComparedGemm c;
    c.gemm = g;
    c.fraction = cost::compute_fraction(calibration, g.precision).value_or(cost::default_achieved_fraction(gpu, precision));
    const double rate = cost::peak_rate(gpu, precision).value() * c.fraction;
    if (!(rate > 0.0)) {
      throw InputError(bench.file, {}, fmt::format("{} GEMMs were measured but the topology's {} has no {} peak",
                                                   g.precision, gpu.name, g.precision));
    }
    c.predicted = Seconds(g.flops.value() / rate);
    c.error_pct = (c.predicted.value() - g.time.value()) / g.time.value() * 100.0;
    abs_err.push_back(std::fabs(c.error_pct));
    points.push_back(std::move(c));
  }
  return GemmComparison{ErrorSummary::of(abs_err), std::move(points)};
}

}  // namespace stepcast::calibrate
