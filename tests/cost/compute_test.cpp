// FLOPs per step against Narayanan et al. 2021's formula, derived by hand for GPT-3 175B, and
// the generalised count against it and against the 6ND rule of Kaplan et al. 2020.
#include <doctest/doctest.h>

#include "stepcast/cost/compute.hpp"
#include "support/gpt3_shape.hpp"

namespace compute_test {

using namespace stepcast;

namespace {

plan::Plan batch(int global_batch, plan::Recompute recompute) {
  plan::Plan p;
  p.dp = 1;
  p.global_batch = global_batch;
  p.seq_len = 2048;
  p.recompute = recompute;
  return p;
}

}  // namespace

TEST_SUITE("cost.compute") {
  TEST_CASE("GPT-3 175B, B = 1536, s = 2048, full recompute: 96Bslh^2(1 + s/6h + V/16lh) = 4.511e18 FLOPs") {
    // By hand: 96 x 1536 x 2048 x 96 x 12288^2 = 4.3775e18; s/(6h) = 2048/73728 = 0.027778;
    // V/(16lh) = 51200/18874368 = 0.0027127; product 4.3775e18 x 1.0304905 = 4.5110e18.
    const Flops f = cost::narayanan_step_flops(test::gpt3_shape(), 1536, 2048, true);
    CHECK(f.value() == doctest::Approx(4.5110e18).epsilon(1e-4));
  }

  TEST_CASE("without recompute the transformer takes 3 passes: 72Bslh^2(1 + s/6h + V/12lh) = 3.386e18 FLOPs") {
    // By hand: 72/96 of 4.3775e18 = 3.2831e18; (1 + 0.027778 + 51200/14155776 = 0.0036169) =
    // 1.0313947; product 3.3862e18.
    const Flops f = cost::narayanan_step_flops(test::gpt3_shape(), 1536, 2048, false);
    CHECK(f.value() == doctest::Approx(3.3862e18).epsilon(1e-4));
  }

  TEST_CASE("the generalised count equals Narayanan's formula for a GPT shape") {
    const auto s = test::gpt3_shape();
    const auto full = cost::step_flops(s, batch(1536, plan::Recompute::kFull));
    CHECK(full.hardware.value() ==
          doctest::Approx(cost::narayanan_step_flops(s, 1536, 2048, true).value()).epsilon(1e-12));
    CHECK(full.model.value() ==
          doctest::Approx(cost::narayanan_step_flops(s, 1536, 2048, false).value()).epsilon(1e-12));
    const auto none = cost::step_flops(s, batch(1536, plan::Recompute::kNone));
    CHECK(none.hardware.value() == doctest::Approx(none.model.value()));
  }

  TEST_CASE("model FLOPs are within 4% of 6 x parameters x tokens (Kaplan et al. 2020) for GPT-3") {
    // 6ND leaves out the attention scores (s/(6h) = 2.8% here); 174.6e9 parameters.
    const auto s = test::gpt3_shape();
    const double params = workload::parameter_count(s);
    const double tokens = 1536.0 * 2048.0;
    const auto f = cost::step_flops(s, batch(1536, plan::Recompute::kNone));
    CHECK(f.model.value() / (6.0 * params * tokens) == doctest::Approx(1.0).epsilon(0.04));
  }

  TEST_CASE("selective recompute adds only the attention-score forward, 4Bs^2h per layer") {
    const auto s = test::gpt3_shape();
    const auto none = cost::step_flops(s, batch(8, plan::Recompute::kNone));
    const auto selective = cost::step_flops(s, batch(8, plan::Recompute::kSelective));
    CHECK(selective.hardware.value() - none.hardware.value() ==
          doctest::Approx(96.0 * 4.0 * 8 * 2048.0 * 2048.0 * 12288.0));
  }

  TEST_CASE("packed documents count the attention scores each document computes: doc-len/s of the causal square") {
    // GPT-3 with flash attention, B = 8, s = 2048: causal scores 3 passes x 96 layers x 8 x 2048 x
    // (2 x 2 x 1024 keys x 12288) = 2.3749e14 FLOPs of the model's; 256-token documents meet 128
    // keys a query, an eighth: 2.9686e13, so the model FLOPs drop by 2.0780e14.
    const auto s = test::gpt3_shape();
    plan::Plan whole = batch(8, plan::Recompute::kNone);
    whole.flash_attention = true;
    plan::Plan packed = whole;
    packed.doc_len = 256;
    const double scores = 3.0 * 96.0 * 8.0 * 2048.0 * 4.0 * 1024.0 * 12288.0;
    CHECK(scores == doctest::Approx(2.3749e14).epsilon(1e-4));
    CHECK(cost::step_flops(s, whole).model.value() - cost::step_flops(s, packed).model.value() ==
          doctest::Approx(scores * 7.0 / 8.0));
  }

  TEST_CASE("an explicit achieved fraction prices compute as hardware FLOPs / GPUs / (peak x fraction)") {
    topology::GpuSpec gpu;
    gpu.name = "A100-SXM4-40GB";
    gpu.peak_bf16 = tflop_per_s(312.0);
    gpu.memory_bandwidth = gbyte_per_s(1555.0);
    plan::Plan p = batch(1536, plan::Recompute::kFull);
    p.dp = 1024;
    workload::Workload w;
    w.shape = test::gpt3_shape();
    w.parameters = workload::parameter_count(*w.shape);
    cost::ComputeOptions options;
    options.achieved_fraction = 0.5;
    const auto c = cost::estimate_compute(w, p, gpu, options);
    // 4.5110e18 / 1024 / (156e12) = 28.24 s.
    CHECK(c.time.value() == doctest::Approx(4.5110e18 / 1024 / 156e12).epsilon(1e-4));
    CHECK_FALSE(c.operator_model);
  }
}

}  // namespace compute_test
