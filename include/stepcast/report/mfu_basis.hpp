// What the MFU a command prints counts for attention, said beside it: the query-key pairs the
// plan's attention kernels compute (cost/compute.cpp's step_flops).
#pragma once

#include <string>

#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::report {

/// "attention counted causal, as FlashAttention computes it" (with the window and its layers when
/// the model slides), or "over the whole s x s square, as the unfused kernels compute it".
std::string mfu_attention_basis(const plan::Plan& plan, const workload::Workload& workload);

}  // namespace stepcast::report
