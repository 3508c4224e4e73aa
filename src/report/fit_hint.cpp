// Suggestions for plans that do not fit, from the memory terms that dominate.
#include "stepcast/report/fit_hint.hpp"

#include <fmt/format.h>

#include "stepcast/core/errors.hpp"
#include "stepcast/report/moe_fit_hint.hpp"

namespace stepcast::report {

std::string fit_hint(const plan::Plan& plan, const cost::MemoryBreakdown& memory, const workload::Workload& workload) {
  std::string out;
  const bool activations_dominate = memory.activations > memory.model_state();
  // MoE plans take no FSDP/ZeRO-3: their model state has levers of its own.
  if (!activations_dominate && workload.shape && workload.shape->moe) return report::moe_fit_hint(plan, workload);
  if (activations_dominate && !plan.flash_attention && plan.recompute == plan::Recompute::kNone) {
    // Korthikanti et al. 2022: the 5as/h term (the s x s attention scores and their softmax and
    // dropout) is the part of activation memory that grows with the square of the sequence.
    out += "  try flash=on: fused attention never stores the s x s attention scores (Korthikanti's 5as/h term)\n";
  }
  if (activations_dominate && plan.recompute != plan::Recompute::kFull) {
    out += "  try recompute=selective or recompute=full, or a smaller mbs=, to hold fewer activations\n";
  }
  if (!activations_dominate && plan.zero_stage() < 3) {
    out += "  try fsdp=full (ZeRO-3) or a larger tp=/pp= to shard the model state further\n";
  }
  return out;
}

std::string fit_text(const plan::Plan& plan, const cost::MemoryBreakdown& memory, const cost::MemoryFit& fit,
                     const workload::Workload& workload) {
  if (fit.fits && fit.margin.value() > 0.0) {
    return fmt::format("Fits: yes, {} free of {} (margin kept: {})\n", format_bytes(fit.headroom),
                       format_bytes(fit.capacity), format_bytes(fit.margin));
  }
  if (fit.fits)
    return fmt::format("Fits: yes, {} free of {}\n", format_bytes(fit.headroom), format_bytes(fit.capacity));
  if (fit.within_margin()) {
    return fmt::format("Fits: NO, {} free of {} per GPU is inside the --memory-margin of {}: counted as not fitting\n",
                       format_bytes(fit.headroom), format_bytes(fit.capacity), format_bytes(fit.margin)) +
           fit_hint(plan, memory, workload);
  }
  return fmt::format("Fits: NO, {} short of {} per GPU: this plan cannot run as given\n", format_bytes(-fit.headroom),
                     format_bytes(fit.capacity)) +
         fit_hint(plan, memory, workload);
}

std::optional<InfeasibleError> refusal(const cost::MemoryBreakdown& memory, const cost::MemoryFit& fit,
                                       const std::string& gpu_name) {
  if (fit.fits) return std::nullopt;
  if (fit.within_margin()) {
    return InfeasibleError(
        fmt::format("the plan needs {} per GPU, which leaves {} of the {}'s {}: less than the --memory-margin of {}",
                    format_bytes(memory.total), format_bytes(fit.headroom), gpu_name, format_bytes(fit.capacity),
                    format_bytes(fit.margin)));
  }
  return InfeasibleError(fmt::format("the plan needs {} per GPU but the {} has {}", format_bytes(memory.total),
                                     gpu_name, format_bytes(fit.capacity)));
}

}  // namespace stepcast::report
