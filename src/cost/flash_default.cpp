// The default attention kernel of a plan on a GPU (flash_default.hpp says why).
#include "stepcast/cost/flash_default.hpp"

namespace stepcast::cost {

bool runs_flash_attention(const topology::GpuSpec& gpu) { return !gpu.kernels.default_attention.empty(); }

plan::Plan with_default_flash(plan::Plan plan, const topology::GpuSpec& gpu) {
  if (!plan.flash_given && runs_flash_attention(gpu)) plan.flash_attention = true;
  return plan;
}

}  // namespace stepcast::cost
