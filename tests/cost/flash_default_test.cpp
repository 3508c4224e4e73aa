// Fused attention by default where the GPU runs FlashAttention-2 (compute capability 8.0 and
// later, Dao 2023), unless the plan says flash= itself.
#include <doctest/doctest.h>

#include "stepcast/cost/flash_default.hpp"
#include "stepcast/plan/plan.hpp"

using namespace stepcast;

namespace {
topology::GpuSpec gpu(const char* name) {
  topology::GpuSpec g;
  g.name = name;
  return g;
}
}  // namespace

TEST_SUITE("cost.flash_default") {
  TEST_CASE("A100, H100 and B200 run FlashAttention-2; a V100 (compute capability 7.0) does not") {
    CHECK(cost::runs_flash_attention(gpu("A100-SXM4-40GB")));
    CHECK(cost::runs_flash_attention(gpu("H100-SXM5-80GB")));
    CHECK(cost::runs_flash_attention(gpu("B200")));
    CHECK_FALSE(cost::runs_flash_attention(gpu("V100-SXM2-32GB")));
  }

  TEST_CASE("a plan without flash= gets it on an A100; flash=off stays off (Korthikanti's accounting)") {
    CHECK(cost::with_default_flash(plan::parse_plan("fsdp=8", "--plan"), gpu("A100-SXM4-40GB")).flash_attention);
    CHECK_FALSE(cost::with_default_flash(plan::parse_plan("fsdp=8,flash=off", "--plan"), gpu("A100-SXM4-40GB"))
                    .flash_attention);
    CHECK_FALSE(cost::with_default_flash(plan::parse_plan("fsdp=8", "--plan"), gpu("V100-SXM2-32GB")).flash_attention);
  }
}
