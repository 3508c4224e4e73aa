// Measured operators against the compute model's time for them, summarised per family.
#include <fmt/format.h>

#include <cmath>

#include "stepcast/calibrate/kernel_bench.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::calibrate {

OperatorFamily family_of(const TimedOperator& op) {
  switch (op.kind) {
    case cost::OpKind::kGemm:
      return op.gemm.batch > 1.0 ? OperatorFamily::kBatchedGemm : OperatorFamily::kGemm;
    case cost::OpKind::kFusedAttention:
      return OperatorFamily::kAttention;
    case cost::OpKind::kMemory:
      return OperatorFamily::kMemory;
  }
  STEPCAST_UNREACHABLE("unknown operator kind");
}

std::string_view to_string(OperatorFamily family) {
  switch (family) {
    case OperatorFamily::kGemm:
      return "GEMM";
    case OperatorFamily::kBatchedGemm:
      return "batched GEMM";
    case OperatorFamily::kMemory:
      return "memory-bound";
    case OperatorFamily::kAttention:
      return "attention";
    case OperatorFamily::kLaunch:
      return "empty kernel";
  }
  STEPCAST_UNREACHABLE("unknown operator family");
}

OperatorComparison compare_operators(const KernelBench& bench, const topology::GpuSpec& gpu,
                                     const cost::Calibration& calibration) {
  require_same_gpu_model(bench, gpu);
  OperatorComparison out;
  std::array<std::vector<double>, kOperatorFamilies> family_errors;
  std::vector<double> all_errors;
  const auto add = [&](ComparedOperator c) {
    c.error_pct = (c.predicted.value() - c.measured_time.value()) / c.measured_time.value() * 100.0;
    family_errors[static_cast<std::size_t>(c.family)].push_back(std::fabs(c.error_pct));
    all_errors.push_back(std::fabs(c.error_pct));
    out.points.push_back(c);
  };
  for (const TimedOperator& m : bench.operators) {
    const OperatorFamily family = family_of(m);
    if (!m.time) {
      ++out.families[static_cast<std::size_t>(family)].skipped;
      continue;
    }
    plan::Plan plan;
    plan.precision = plan::parse_precision(m.precision, bench.file);
    plan.flash_attention = m.kind == cost::OpKind::kFusedAttention;
    if (m.kind == cost::OpKind::kGemm && !(cost::peak_rate(gpu, plan.precision).value() > 0.0)) {
      throw InputError(bench.file, {},
                       fmt::format("{} GEMMs were measured but the topology's {} has no {} peak", m.precision, gpu.name,
                                   m.precision));
    }
    const cost::KernelParams params = cost::kernel_params(calibration, gpu, plan);
    const cost::KernelTime t = cost::time_operator(m.op(), gpu, plan.precision, params);
    ComparedOperator c;
    c.measured = &m;
    c.family = family;
    c.measured_time = *m.time;
    c.predicted = t.gpu;
    c.bound = t.bound;
    c.efficiency = t.efficiency;
    add(c);
  }
  if (bench.launch) {
    // An empty kernel has no roofline time: the model prices it as one kernel overhead.
    ComparedOperator c;
    c.family = OperatorFamily::kLaunch;
    c.measured_time = bench.launch->gpu_per_kernel;
    c.predicted = cost::kernel_params(calibration, gpu, plan::Plan{}).kernel_overhead;
    c.bound = cost::Bound::kOverhead;
    add(c);
  }
  for (std::size_t i = 0; i < out.families.size(); ++i) {
    FamilySummary& f = out.families[i];
    const int skipped = f.skipped;
    static_cast<ErrorSummary&>(f) = ErrorSummary::of(family_errors[i]);
    f.points = static_cast<int>(family_errors[i].size());
    f.skipped = skipped;
  }
  static_cast<ErrorSummary&>(out) = ErrorSummary::of(all_errors);
  return out;
}

}  // namespace stepcast::calibrate
