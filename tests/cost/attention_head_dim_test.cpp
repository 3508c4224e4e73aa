// Fused attention's efficiency by head dimension: a score costs matmul work in proportion to the
// head dimension d and non-matmul work (exponentials, rescaling) that does not grow with it, so
// the efficiency goes as 1 / (1 + b / d). The terms b are solved from the FlashAttention-3 paper's
// H100 measurements at d = 64 and 128 (Shah et al. 2024, arXiv:2407.08608); the checks below use
// measurements the terms were not solved from, or derive the expected value by hand.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/attention_efficiency.hpp"

namespace attention_head_dim_test {

using namespace stepcast;

namespace {

using test::catalogue_gpu;

/// A long pass (16384 keys per query) at head dimension d.
double efficiency(const topology::GpuSpec& gpu, plan::FlashKernel kernel, double d, cost::OpPass pass) {
  return test::attention_efficiency(gpu, kernel, d, 16384.0, pass);
}

}  // namespace

TEST_SUITE("cost.attention_head_dim") {
  TEST_CASE("FlashAttention-3's 740 TFLOP/s is its head-dimension-256 figure: at 128 the H100 runs about 648") {
    // The H100 file's FlashAttention-3 forward is 740 of 989.4 TFLOP/s, measured at d = 256. The
    // forward's b, solved from 497 (d = 64) and 648 (d = 128) TFLOP/s: r = 648/497 = 1.3038,
    // b = 128 (r - 1) / (2 - r) = 55.86. At d = 128: 740 x (1 + 55.86/256) / (1 + 55.86/128)
    // = 740 x 1.2182 / 1.4364 = 627.6 TFLOP/s, within 4% of the 648 the paper measured there.
    const topology::GpuSpec h100 = catalogue_gpu("h100-sxm5-80gb");
    CHECK(efficiency(h100, plan::FlashKernel::kFa3, 256.0, cost::OpPass::kForward) * 989.4 ==
          doctest::Approx(740.0).epsilon(1e-3));
    CHECK(efficiency(h100, plan::FlashKernel::kFa3, 128.0, cost::OpPass::kForward) * 989.4 ==
          doctest::Approx(627.6).epsilon(1e-3));
    CHECK(efficiency(h100, plan::FlashKernel::kFa3, 128.0, cost::OpPass::kForward) * 989.4 ==
          doctest::Approx(648.0).epsilon(0.04));
  }

  TEST_CASE("cuDNN's forward at head dimension 64 runs at 413/595 of its rate at 128, its backward at 395/465") {
    // The B200's cuDNN terms are the H100's (borrowed): forward b = 100.85, backward b = 27.57,
    // both from d = 128; the figures at 128 are the B200's own: SimuMax's 0.8715 / 2 at sequence
    // 4096, here at 16384 keys: x (1 + 571.5/4096) / (1 + 571.5/16384) = 1.13953 / 1.03488.
    const topology::GpuSpec b200 = catalogue_gpu("b200-sxm-180gb");
    const double f128 = efficiency(b200, plan::FlashKernel::kNewest, 128.0, cost::OpPass::kForward);
    const double b128 = efficiency(b200, plan::FlashKernel::kNewest, 128.0, cost::OpPass::kBackward);
    CHECK(f128 == doctest::Approx(0.8715 / 2.0 * 1.13953 / 1.03488).epsilon(1e-4));
    CHECK(efficiency(b200, plan::FlashKernel::kNewest, 64.0, cost::OpPass::kForward) / f128 ==
          doctest::Approx(413.0 / 595.0).epsilon(1e-3));
    CHECK(efficiency(b200, plan::FlashKernel::kNewest, 64.0, cost::OpPass::kBackward) / b128 ==
          doctest::Approx(395.0 / 465.0).epsilon(1e-3));
  }

  TEST_CASE("DeepSeek-V3's latent attention (192 query-key, 128 value) runs as head dimension 160, above 128's rate") {
    // (1 + 100.85/128) / (1 + 100.85/160) = 1.7879 / 1.6303 = 1.0967 for cuDNN's forward.
    const topology::GpuSpec b200 = catalogue_gpu("b200-sxm-180gb");
    CHECK(efficiency(b200, plan::FlashKernel::kNewest, 160.0, cost::OpPass::kForward) /
              efficiency(b200, plan::FlashKernel::kNewest, 128.0, cost::OpPass::kForward) ==
          doctest::Approx(1.0967).epsilon(1e-3));
    // The shipped DeepSeek-V3 shape: 192 query-key (128 + 64 rotary) and 128 value head dimensions.
    const workload::Workload v3 =
        workload::load_workload(std::string(STEPCAST_SOURCE_DIR) + "/workloads/deepseek-v3.json");
    cost::OperatorContext c;
    c.micro_batch = 1.0;
    c.seq = 4096.0;
    c.flash = true;
    int attention_passes = 0;
    for (const cost::Operator& op : cost::layer_operators(*v3.shape, c)) {
      if (op.kind != cost::OpKind::kFusedAttention) continue;
      ++attention_passes;
      CHECK(op.head_dim == doctest::Approx(160.0));
    }
    CHECK(attention_passes == 2);  // the forward and the backward
  }

  TEST_CASE("a kernel without head-dimension terms keeps its figure at every head dimension") {
    // Triton's measured forward moves less than 2% between d = 64 and 128 (403 and 395 TFLOP/s):
    // the files give it no terms.
    const topology::GpuSpec h100 = catalogue_gpu("h100-sxm5-80gb");
    CHECK(efficiency(h100, plan::FlashKernel::kTriton, 64.0, cost::OpPass::kForward) ==
          doctest::Approx(efficiency(h100, plan::FlashKernel::kTriton, 128.0, cost::OpPass::kForward)));
  }
}

}  // namespace attention_head_dim_test
