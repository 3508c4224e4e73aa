// The memory verdict every plan command gives the same way: the "Fits" line, what to try when a
// plan does not fit, and exit 3 after the output is written.
#pragma once

#include <optional>
#include <string>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::report {

/// Lines suggesting the plan settings that shrink the largest memory term (empty when none
/// applies): stored attention scores, activations without recompute, unsharded model state; for
/// an MoE workload, what helps MoE plans (report::moe_fit_hint).
std::string fit_hint(const plan::Plan& plan, const cost::MemoryBreakdown& memory, const workload::Workload& workload);

/// "Fits: yes, X free of Y" or "Fits: NO, X short of Y per GPU..." followed by fit_hint's lines.
std::string fit_text(const plan::Plan& plan, const cost::MemoryBreakdown& memory, const cost::MemoryFit& fit,
                     const workload::Workload& workload);

/// The InfeasibleError (exit 3) a command raises after its output when the plan does not fit.
std::optional<InfeasibleError> refusal(const cost::MemoryBreakdown& memory, const cost::MemoryFit& fit,
                                       const std::string& gpu_name);

}  // namespace stepcast::report
