// Applying a calibration: measured tier figures replace the topology's nominal ones field by
// field, general overrides first, then per collective; measured kernel figures replace the
// compute model's defaults.
#include "stepcast/cost/calibration.hpp"

#include <fmt/format.h>

#include "stepcast/core/explain.hpp"
#include "stepcast/cost/low_precision.hpp"

namespace stepcast::cost {
namespace {

topology::CommTiers override_tiers(const TierOverrides& o, topology::CommTiers tiers) {
  if (o.intra_bw) tiers.intra_bw = o.intra_bw->value;
  if (o.intra_latency) tiers.intra_latency = o.intra_latency->value;
  if (o.node_bw) {
    // What NCCL's search sees alone scales with the measured figure.
    if (tiers.node_bw.value() > 0.0) tiers.group_nic_bw *= o.node_bw->value / tiers.node_bw;
    tiers.node_bw = o.node_bw->value;
  }
  if (o.gpu_nic_bw) tiers.gpu_nic_bw = o.gpu_nic_bw->value;
  if (o.inter_latency) tiers.inter_latency = o.inter_latency->value;
  return tiers;
}

bool holds(const CollectiveCalibration& entry, Bytes size) {
  if (size < entry.min_size) return false;
  return !entry.max_size || size <= *entry.max_size;
}

}  // namespace

topology::CommTiers apply(const Calibration& calibration, topology::CommTiers tiers) {
  return override_tiers(calibration.tiers, tiers);
}

topology::CommTiers apply(const Calibration& calibration, topology::CommTiers tiers, CollectiveOp op, Bytes size) {
  tiers = apply(calibration, tiers);
  for (const CollectiveCalibration& entry : calibration.collectives) {
    if (entry.op == op && holds(entry, size)) tiers = override_tiers(entry.tiers, tiers);
  }
  return tiers;
}

NcclTuning nccl_tuning(const Calibration& calibration) {
  NcclTuning tuning;
  for (const auto& [protocol, entry] : calibration.nccl_protocols)
    tuning[static_cast<std::size_t>(protocol)] = entry.tuning;
  return tuning;
}

KernelParams kernel_params(const Calibration& calibration, const topology::GpuSpec& gpu, const plan::Plan& plan) {
  const ParameterValues* parameters = calibration.parameters.values.empty() ? nullptr : &calibration.parameters.values;
  KernelParams p = default_kernel_params(gpu, plan, parameters);
  if (parameters) p.source = fmt::format("free parameters calibrated: {}", calibration.source);
  if (!calibration.compute) return p;
  const ComputeCalibration& c = *calibration.compute;
  if (const auto it = c.gemm_efficiency.find(std::string(plan::to_string(plan.precision)));
      it != c.gemm_efficiency.end()) {
    p.gemm_efficiency = it->second;
    if (!is_low_precision(plan.precision)) p.gemm_efficiency_bf16 = it->second;
  }
  p.memory_efficiency = c.memory_efficiency.value_or(p.memory_efficiency);
  p.attention_forward_efficiency = c.attention_forward_efficiency.value_or(p.attention_forward_efficiency);
  p.attention_backward_efficiency = c.attention_backward_efficiency.value_or(p.attention_backward_efficiency);
  p.kernel_overhead = c.kernel_overhead.value_or(p.kernel_overhead);
  p.host_overhead = c.host_overhead.value_or(p.host_overhead);
  p.source = fmt::format("calibrated: {}{}", c.source, p.source.empty() ? "" : "; " + p.source);
  return p;
}

bool within_fitted_range(const Calibration& calibration, Bytes size, int ranks, int nodes) {
  if (!calibration.range) return true;
  const FittedRange& r = *calibration.range;
  return !(size < r.min_size) && !(r.max_size < size) && ranks >= r.min_ranks && ranks <= r.max_ranks &&
         nodes >= r.min_nodes && nodes <= r.max_nodes;
}

std::string to_string(const FittedRange& r) {
  const auto span = [](int lo, int hi, std::string_view one, std::string_view many) {
    return lo == hi ? fmt::format("{} {}", lo, lo == 1 ? one : many) : fmt::format("{} to {} {}", lo, hi, many);
  };
  return fmt::format("sizes {} to {}, {}, {}", format_bytes(r.min_size), format_bytes(r.max_size),
                     span(r.min_ranks, r.max_ranks, "rank", "ranks"), span(r.min_nodes, r.max_nodes, "node", "nodes"));
}

}  // namespace stepcast::cost
