// The memory verdict every plan command gives the same way: the "Fits" line, what to try when a
// plan does not fit (each change tried on the model), and exit 3 after the output is written.
#pragma once

#include <optional>
#include <string>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/report/plan_inputs.hpp"

namespace stepcast::report {

/// What to try when `in.plan` does not fit: each change of one setting on the same GPUs (recompute,
/// fused attention, a deeper ZeRO/FSDP stage, a smaller micro-batch, a larger tp, pp or ep) is
/// priced on the model, and only the changes that fit with the margin are listed, the smallest
/// change first (the one that frees the least memory); pairs of changes when no single one fits.
/// An MoE plan's lines start with its model state split (report::moe_fit_hint).
std::string fit_hint(const PlanInputs& in, const cost::MemoryFit& fit);

/// "Fits: yes, X free of Y" or "Fits: NO, X short of Y per GPU..." (naming the margin kept) followed
/// by fit_hint's lines.
std::string fit_text(const PlanInputs& in, const cost::MemoryFit& fit);

/// "memory margin: of each 80.00 GiB GPU, 9.20 GiB kept free (...)", for reports over many plans.
std::string margin_note(const cost::MemoryMargin& margin, const topology::GpuSpec& gpu);
/// The same for reports over several GPUs: "memory margin: 11.5% of each GPU's memory kept free (...)".
std::string margin_note(const cost::MemoryMargin& margin);

/// The InfeasibleError (exit 3) a command raises after its output when the plan does not fit.
std::optional<InfeasibleError> refusal(const cost::MemoryBreakdown& memory, const cost::MemoryFit& fit,
                                       const std::string& gpu_name);

}  // namespace stepcast::report
