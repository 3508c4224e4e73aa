// Fused attention by default where the GPU's file names the kernel frameworks run on it (FlashAttention-2
// needs compute capability 8.0 and later, Dao 2023), unless the plan says flash= itself.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/flash_default.hpp"
#include "stepcast/plan/plan.hpp"

namespace flash_default_test {

using namespace stepcast;

namespace {
topology::GpuSpec catalogue_gpu(const char* id) {
  return topology::load_gpu_file(std::string(STEPCAST_SOURCE_DIR) + "/topologies/gpus/" + id + ".json");
}
/// A GPU block that names no attention kernel, as a V100's would (FlashAttention-2 needs Ampere).
topology::GpuSpec without_fused_attention() {
  topology::GpuSpec g;
  g.name = "V100-SXM2-32GB";
  return g;
}
}  // namespace

TEST_SUITE("cost.flash_default") {
  TEST_CASE("A100, H100 and B200 files name a fused attention kernel (fa2, fa3, fa2), a block without one runs none") {
    CHECK(catalogue_gpu("a100-sxm4-40gb").kernels.default_attention == "fa2");
    CHECK(catalogue_gpu("h100-sxm5-80gb").kernels.default_attention == "fa3");
    CHECK(cost::runs_flash_attention(catalogue_gpu("b200-sxm-180gb")));
    CHECK_FALSE(cost::runs_flash_attention(without_fused_attention()));
  }

  TEST_CASE("a plan without flash= gets it on an A100, flash=off stays off (Korthikanti's accounting)") {
    const auto a100 = catalogue_gpu("a100-sxm4-40gb");
    CHECK(cost::with_default_flash(plan::parse_plan("fsdp=8", "--plan"), a100).flash_attention);
    CHECK_FALSE(cost::with_default_flash(plan::parse_plan("fsdp=8,flash=off", "--plan"), a100).flash_attention);
    CHECK_FALSE(
        cost::with_default_flash(plan::parse_plan("fsdp=8", "--plan"), without_fused_attention()).flash_attention);
  }
}

}  // namespace flash_default_test
