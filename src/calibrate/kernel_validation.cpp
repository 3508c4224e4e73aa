// Measured GEMMs against the compute model's time for them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/calibrate/validation.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::calibrate {

namespace {

/// Bytes of one input element as the bench stores it (validate/README.md): fp8 reads 1-byte
/// inputs and writes 16-bit output; 16-bit types 2; tf32 and fp32 keep 4-byte floats.
double input_bytes(plan::Precision p) {
  switch (p) {
    case plan::Precision::kFp8: return 1.0;
    case plan::Precision::kBf16:
    case plan::Precision::kFp16: return 2.0;
    case plan::Precision::kTf32:
    case plan::Precision::kFp32: return 4.0;
  }
  return 4.0;
}

}  // namespace

GemmComparison compare_gemms(const KernelBench& bench, const topology::GpuSpec& gpu, const cost::Calibration& calibration) {
  require_same_gpu_model(bench, gpu);
  std::vector<ComparedGemm> points;
  std::vector<double> abs_err;
  for (const GemmTiming& g : bench.gemms) {
    plan::Plan plan;
    plan.precision = plan::parse_precision(g.precision, bench.file);
    if (!(cost::peak_rate(gpu, plan.precision).value() > 0.0)) {
      throw InputError(bench.file, {}, fmt::format("{} GEMMs were measured but the topology's {} has no {} peak",
                                                   g.precision, gpu.name, g.precision));
    }
    const cost::KernelParams params = cost::kernel_params(calibration, gpu, plan);
    cost::Operator op;
    op.name = "gemm";
    op.kind = cost::OpKind::kGemm;
    op.gemm = {1.0, static_cast<double>(g.m), static_cast<double>(g.n), static_cast<double>(g.k)};
    op.flops = g.flops;
    const double in_bytes = input_bytes(plan.precision);
    const double out_bytes = std::max(in_bytes, 2.0);
    op.bytes = Bytes((op.gemm.m * op.gemm.k + op.gemm.k * op.gemm.n) * in_bytes + op.gemm.m * op.gemm.n * out_bytes);
    const cost::KernelTime t = cost::time_operator(op, gpu, plan.precision, params);
    ComparedGemm c;
    c.gemm = g;
    c.efficiency = t.efficiency;
    c.predicted = t.gpu;
    c.error_pct = (c.predicted.value() - g.time.value()) / g.time.value() * 100.0;
    abs_err.push_back(std::fabs(c.error_pct));
    points.push_back(std::move(c));
  }
  return GemmComparison{ErrorSummary::of(abs_err), std::move(points)};
}

}  // namespace stepcast::calibrate
