// The default attention kernel of a plan on a GPU (flash_default.hpp says why).
#include "stepcast/cost/flash_default.hpp"

#include "stepcast/cost/nccl_tuning.hpp"

namespace stepcast::cost {

namespace {
// Ampere's compute capability: the first FlashAttention-2 runs on (Dao 2023).
constexpr int kFirstFlashCapability = 80;
}  // namespace

bool runs_flash_attention(const topology::GpuSpec& gpu) {
  const auto capability = nccl_compute_capability(gpu.name);
  return capability && *capability >= kFirstFlashCapability;
}

plan::Plan with_default_flash(plan::Plan plan, const topology::GpuSpec& gpu) {
  if (!plan.flash_given && runs_flash_attention(gpu)) plan.flash_attention = true;
  return plan;
}

}  // namespace stepcast::cost
