// The kernel roofline against hand derivations: tile and wave quantization on the SM count
// (NVIDIA's "Matrix Multiplication Background User's Guide"), memory-bound kernels at the
// achieved HBM bandwidth, the per-kernel overheads, and the default figures' sources.
#include <doctest/doctest.h>

#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/cost/launch_stream.hpp"
#include "stepcast/topology/topology.hpp"

#include <string>
#include "support/input_error_text.hpp"

namespace kernel_model_test {

using namespace stepcast;

namespace {

topology::GpuSpec catalogue_gpu(const char* id) {
  return topology::load_gpu_file(std::string(STEPCAST_SOURCE_DIR) + "/topologies/gpus/" + id + ".json");
}

topology::GpuSpec a100() { return catalogue_gpu("a100-sxm4-80gb"); }

}  // namespace

TEST_SUITE("cost.kernel_model") {
  TEST_CASE("a 4096^3 GEMM on 132 SMs: 1024 tiles of 128x128 in 8 waves of 132 slots, 1024/1056 busy") {
    CHECK(cost::gemm_quantization({1, 4096, 4096, 4096}, 132) == doctest::Approx(1024.0 / 1056.0));
  }

  TEST_CASE("a tile-aligned GEMM that fills whole waves runs at the asymptotic rate") {
    // 108 x 2 tiles of 128 x 128 = 1536 x 2304 on 108 SMs: exactly 2 waves.
    CHECK(cost::gemm_quantization({1, 128 * 12, 128 * 18, 4096}, 108) == doctest::Approx(1.0));
  }

  TEST_CASE("a skinny weight gradient (1024 x 128 x 8192) splits K: 8 tiles x 8 splits = 64 of 108 SMs") {
    // Without split-K 8 tiles of 128 x 128 use 8 of 108 SMs; splitting K in 8 (1024 each) gives
    // 64 blocks in one wave; 16 splits give 128 blocks in two waves of 108 slots: 128/216, the same.
    CHECK(cost::gemm_quantization({1, 1024, 128, 8192}, 108) == doctest::Approx(64.0 / 108.0));
  }

  TEST_CASE(
      "a half-filled tile wastes its padding: M = N = 64 in one 64x64 tile, at half the operand reuse of 128x128") {
    // One tile on 108 SMs: 1/108 busy; 64x64 tiles reuse operands 32 times against 64 for 128x128.
    // K = 512 splits twice (256 each): 2 blocks, 2/108 x 0.5.
    CHECK(cost::gemm_quantization({1, 64, 64, 512}, 108) == doctest::Approx(2.0 / 108.0 * 0.5));
  }

  TEST_CASE("a GEMM's time: FLOPs / (peak x efficiency x sustained share x quantization) + the kernel overhead") {
    const auto gpu = a100();
    plan::Plan p;
    // The default efficiency is the maximum achievable matmul rate 267.9 of 312 TFLOP/s, times the
    // share of it a step sustains: 0.9 here.
    const cost::ParameterValues sustained = {{"sustained_tensor_fraction", 0.9}};
    const auto params = cost::default_kernel_params(gpu, p, &sustained);
    CHECK(params.gemm_efficiency == doctest::Approx(267.9 / 312.0 * 0.9));
    cost::Operator op;
    op.kind = cost::OpKind::kGemm;
    op.gemm = {1, 128 * 12, 128 * 18, 4096};
    op.flops = Flops(2.0 * 1536 * 2304 * 4096);
    op.bytes = Bytes(2.0 * (1536 * 4096 + 4096 * 2304 + 1536 * 2304));
    const auto t = cost::time_operator(op, gpu, plan::Precision::kBf16, params);
    // 2.899e10 FLOP at 0.9 x 267.9 TFLOP/s = 120.2 us, far above its 38.5 MB at the default memory
    // efficiency (0.88 x 2039 GB/s: 21.5 us).
    CHECK(t.gpu.value() ==
          doctest::Approx(2.0 * 1536 * 2304 * 4096 / (0.9 * 267.9e12) + params.kernel_overhead.value()));
    CHECK(t.bound == cost::Bound::kCompute);
  }

  TEST_CASE(
      "an element-wise kernel moves its bytes at the memory efficiency's share of the HBM bandwidth, plus the kernel "
      "overhead") {
    const auto gpu = a100();
    plan::Plan p;
    auto params = cost::default_kernel_params(gpu, p);
    params.memory_efficiency = 0.88;  // a streaming read on A100 80GB: 1.80 of 2.04 TB/s
    cost::Operator op;
    op.kind = cost::OpKind::kMemory;
    op.bytes = Bytes(1e9);
    op.flops = Flops(1e8);
    const auto t = cost::time_operator(op, gpu, plan::Precision::kBf16, params);
    CHECK(t.gpu.value() == doctest::Approx(1e9 / (0.88 * 2039e9) + params.kernel_overhead.value()));
    CHECK(t.bound == cost::Bound::kMemory);
    CHECK(t.host == params.host_overhead);
  }

  TEST_CASE("FlashAttention-3 on an A100 is refused, a GPU block without a figure a plan needs is refused") {
    auto gpu = a100();
    plan::Plan p;
    p.flash_attention = true;
    p.flash_kernel = plan::FlashKernel::kFa3;
    const std::string file = std::string(STEPCAST_SOURCE_DIR) + "/topologies/gpus/a100-sxm4-80gb.json";
    CHECK(test::input_error_text([&] { (void)cost::default_kernel_params(gpu, p); }) ==
          file +
              ":/kernels/attention/fa3: flash=fa3: the A100-SXM4-80GB runs no fa3 attention kernel stepcast holds "
              "figures for (its kernels: fa2, triton; FlashAttention-3 runs on Hopper GPUs only); choose one of those");
    // The A100 file gives no FP8 GEMM figure: an fp8 plan is refused naming the figure.
    p.flash_attention = false;
    p.precision = plan::Precision::kFp8;
    CHECK(test::input_error_text([&] { (void)cost::default_kernel_params(gpu, p); }) ==
          file +
              ":/kernels/gemm/fp8: the A100-SXM4-80GB gives no figure for GEMMs in fp8, which the compute model "
              "needs: add it to the GPU file (a cited value or a free parameter of the model, "
              "topologies/gpus/README.md)");
  }

  TEST_CASE("a figure that names a free parameter takes a calibration's value, a cited figure keeps the file's") {
    // The B200's kernel overhead is the free parameter kernel_overhead; its BF16 GEMM fraction is
    // SimuMax's 0.4878 (Megatron's shapes, each timed on its own) and its FP8 one ml-engineering's
    // maximum (3432.5 of 4500 TFLOP/s), both scaled by the sustained share; its HBM fraction is the
    // A100's cited 0.88, borrowed, which no parameter value can move.
    const auto b200 = catalogue_gpu("b200-sxm-180gb");
    plan::Plan p;
    const cost::ParameterValues values = {{"sustained_tensor_fraction", 0.7}, {"kernel_overhead", 5e-6}};
    const auto params = cost::default_kernel_params(b200, p, &values);
    CHECK(params.gemm_efficiency == doctest::Approx(0.4878 * 0.7));
    CHECK(params.kernel_overhead.value() == doctest::Approx(5e-6));
    CHECK(params.memory_efficiency == doctest::Approx(0.88));
    p.precision = plan::Precision::kFp8;
    CHECK(cost::default_kernel_params(b200, p, &values).gemm_efficiency == doctest::Approx(3432.5 / 4500.0 * 0.7));
    const std::string sources = cost::kernel_figure_sources(b200, p);
    CHECK(sources.find("HBM: no Blackwell measurement") != std::string::npos);
    CHECK(sources.find("(borrowed from a100-sxm4-80gb)") != std::string::npos);
    CHECK(sources.find("(free parameter kernel_overhead)") != std::string::npos);
    // Predictions that explain nothing format no sources (the planner's path).
    CHECK(params.source.empty());
  }

  TEST_CASE(
      "a cited maximum scaled by a free parameter: H100 GEMMs at 792.1/989 (BF16), 1402.6/1979 (FP8) x the share") {
    // ml-engineering's maximum achievable matmul on the H100 SXM, 792.1 of 989 TFLOP/s in BF16 and
    // 1402.6 of 1979 in FP8, times a calibration's sustained_tensor_fraction of 0.75: 0.6007 of the
    // BF16 peak and 0.5316 of the FP8 peak; an FP8 plan's other GEMMs keep BF16's.
    const auto h100 = catalogue_gpu("h100-sxm5-80gb");
    plan::Plan p;
    const cost::ParameterValues values = {{"sustained_tensor_fraction", 0.75}};
    CHECK(cost::default_kernel_params(h100, p, &values).gemm_efficiency == doctest::Approx(792.1 / 989.0 * 0.75));
    p.precision = plan::Precision::kFp8;
    const auto fp8 = cost::default_kernel_params(h100, p, &values);
    CHECK(fp8.gemm_efficiency == doctest::Approx(1402.6 / 1979.0 * 0.75));
    CHECK(fp8.gemm_efficiency_bf16 == doctest::Approx(792.1 / 989.0 * 0.75));
    const std::string sources = cost::kernel_figure_sources(h100, p);
    CHECK(sources.find("792.1 of 989 TFLOP/s (times free parameter sustained_tensor_fraction)") != std::string::npos);
    CHECK(sources.find("H100 SXM 1402.6 of 1979 TFLOP/s (torch 2.7.0+cu126) (times free parameter "
                       "sustained_tensor_fraction)") != std::string::npos);
  }

  TEST_CASE(
      "FlashAttention in Triton runs at FA2's efficiency over Dao 2023's ratios: 1.4x slower forward, 2x slower "
      "backward") {
    plan::Plan p;
    p.flash_attention = true;
    p.flash_kernel = plan::FlashKernel::kTriton;
    // Each attention figure is a kernel timed on its own, scaled like a GEMM's by the share a
    // training step sustains: 0.8 here.
    const cost::ParameterValues values = {{"sustained_tensor_fraction", 0.8}};
    const auto triton = cost::default_kernel_params(a100(), p, &values);
    // FA2 on A100: up to 73% of peak forward, the backward at the 50% end of "50-73%".
    CHECK(triton.attention_forward_efficiency == doctest::Approx(0.73 / 1.4 * 0.8));
    CHECK(triton.attention_backward_efficiency == doctest::Approx(0.50 / 2.0 * 0.8));
    p.flash_kernel = plan::FlashKernel::kNewest;  // FA2 on an A100
    CHECK(cost::default_kernel_params(a100(), p, &values).attention_forward_efficiency == doctest::Approx(0.73 * 0.8));
  }

  TEST_CASE(
      "launch stream: the host runs ahead, (h, g) = (1, 3), (1, 3), (5, 1) take max over k of H_1..k + G_k..n = 8") {
    // By hand: host issues at 1, 2, 7; the GPU runs 1-4, 4-7, 7-8.
    const auto k = [](double h, double g) { return cost::LaunchStream::of(Seconds(h), Seconds(g)); };
    const auto s = k(1, 3).then(k(1, 3)).then(k(5, 1));
    CHECK(s.makespan.value() == doctest::Approx(8.0));
    CHECK(s.host.value() == doctest::Approx(7.0));
    CHECK(s.gpu.value() == doctest::Approx(7.0));
    // Ten repeats of a host-bound pair (h 2, g 1 each): the host's 40 plus the last GPU kernel, 1.
    const auto pair = k(2, 1).then(k(2, 1));
    CHECK(pair.times(10).makespan.value() == doctest::Approx(41.0));
    // GPU-bound: the first launch, 1, plus the GPU's 10 x 2 x 3.
    CHECK(k(1, 3).then(k(1, 3)).times(10).makespan.value() == doctest::Approx(61.0));
  }
}

}  // namespace kernel_model_test
