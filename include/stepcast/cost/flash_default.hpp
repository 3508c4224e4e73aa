// Fused (flash) attention by default: every current framework (Megatron-LM with Transformer
// Engine, PyTorch's scaled_dot_product_attention, DeepSpeed, llm-foundry) trains with it on GPUs
// that run it; a plan that says flash=off is priced with Korthikanti et al.'s stored scores.
#pragma once

#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::cost {

/// Whether `gpu` runs a fused attention kernel: its GPU file names the one frameworks run on it
/// (kernels.attention.default; FlashAttention-2 needs compute capability 8.0 or later, Dao 2023).
bool runs_flash_attention(const topology::GpuSpec& gpu);

/// `plan` with flash attention on when the plan does not say flash= itself and `gpu` runs it.
plan::Plan with_default_flash(plan::Plan plan, const topology::GpuSpec& gpu);

}  // namespace stepcast::cost
