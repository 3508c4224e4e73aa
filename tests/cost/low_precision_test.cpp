// Low-precision training as Transformer Engine runs it: which GEMMs run quantized, at what rate,
// and the weight copies it keeps. Expected numbers are derived by hand in the comments from the
// model shape (Hugging Face config of Llama-2 7B) and the recipe's documented formats.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace low_precision_test {

using namespace stepcast;

namespace {
workload::Workload llama2_7b() {
  return workload::load_workload(std::string(STEPCAST_SOURCE_DIR) + "/workloads/llama2-7b.json");
}
plan::Plan resolved(const std::string& text, const workload::Workload& w, int gpus) {
  return plan::resolve(plan::parse_plan(text), w, gpus);
}
}  // namespace

TEST_SUITE("cost.low_precision") {
  TEST_CASE(
      "fp8 weight copies of Llama-2 7B where FP8 GEMMs read only TN (Hopper): two 1-byte copies of every linear weight "
      "plus delayed-scaling state") {
    const workload::Workload w = llama2_7b();
    // Per layer, h = 4096, 32 kv heads of 128 (kv width 4096), f = 11008, gated MLP:
    //   QKV h(h + 2*4096) = 4096 x 12288        =  50,331,648
    //   output projection h*h                  =  16,777,216
    //   gate+up 2*f*h = 2 x 11008 x 4096        =  90,177,536
    //   down f*h                                =  45,088,768
    //   linear weights per layer                = 202,375,168
    CHECK(cost::quantized_weight_count(*w.shape) == doctest::Approx(202375168.0));
    // One GPU (tp = pp = 1, DDP): 32 layers x 202,375,168 x 2 copies (row-wise and column-wise)
    // x 1 B = 12,952,010,752 B; delayed scaling keeps per GEMM 3 tensors x (1024 amax history + scale
    // + scale_inv) x 4 B = 12,312 B, x 4 GEMMs x 32 layers = 1,575,936 B. Total 12,953,586,688 B.
    const plan::Plan fp8 = resolved("dp=1,precision=fp8", w, 1);
    CHECK(cost::quantized_copy_bytes(*w.shape, fp8, 1, false).value() == doctest::Approx(12953586688.0));
    CHECK(cost::estimate_memory(w, fp8).quantized_copies.value() == doctest::Approx(12953586688.0));
    // tp = 2, pp = 2 (4 GPUs): 16 layers x 202,375,168 / 2 x 2 B = 3,238,002,688 B, plus 16 x 4 x
    // 12,312 B = 787,968 B of state: 3,238,790,656 B.
    const plan::Plan split = resolved("dp=1,tp=2,pp=2,precision=fp8", w, 4);
    CHECK(cost::quantized_copy_bytes(*w.shape, split, 1, false).value() == doctest::Approx(3238790656.0));
    // Current scaling keeps only amax, scale and scale_inv: 3 x 3 x 4 B = 36 B per GEMM.
    const plan::Plan current = resolved("dp=1,precision=fp8,fp8-recipe=current", w, 1);
    CHECK(cost::quantized_copy_bytes(*w.shape, current, 1, false).value() ==
          doctest::Approx(12952010752.0 + 32 * 4 * 36.0));
    // MXFP8: 1 B + one E8M0 scale per 32 elements = 1.03125 B per element, per copy:
    // 32 x 202,375,168 x 2 x 1.03125 = 13,356,761,088 B, no scaling state beyond the block scales.
    const plan::Plan mx = resolved("dp=1,precision=mxfp8", w, 1);
    CHECK(cost::quantized_copy_bytes(*w.shape, mx, 1, false).value() == doctest::Approx(13356761088.0));
    // NVFP4: 0.5 B + one E4M3 scale per 16 elements = 0.5625 B: 32 x 202,375,168 x 2 x 0.5625.
    const plan::Plan fp4 = resolved("dp=1,precision=nvfp4", w, 1);
    CHECK(cost::quantized_copy_bytes(*w.shape, fp4, 1, false).value() ==
          doctest::Approx(32.0 * 202375168.0 * 2.0 * 0.5625));
    // bf16 keeps none.
    CHECK(cost::estimate_memory(w, resolved("dp=1,precision=bf16", w, 1)).quantized_copies.value() == 0.0);
  }

  TEST_CASE(
      "where FP8 GEMMs take any layout (Blackwell), per-tensor fp8 keeps one copy, the block-scaled formats two") {
    // Transformer Engine's nvte_is_non_tn_fp8_gemm_supported: compute capability 10.x, 11.x, 13.0 on.
    const auto gpu = [](const char* id) {
      return topology::load_gpu_file(std::string(STEPCAST_SOURCE_DIR) + "/topologies/gpus/" + id + ".json");
    };
    CHECK(cost::fp8_gemm_any_layout(gpu("b200-sxm-180gb")));
    CHECK(cost::fp8_gemm_any_layout(gpu("gb300-279gb")));
    CHECK_FALSE(cost::fp8_gemm_any_layout(gpu("h100-sxm5-80gb")));
    topology::GpuSpec consumer;
    consumer.compute_capability = 120;  // TE's stated exception: SM 12.0 reads TN only
    CHECK_FALSE(cost::fp8_gemm_any_layout(consumer));
    const workload::Workload w = llama2_7b();
    // One 1-byte copy: 32 x 202,375,168 = 6,476,005,376 B, plus the same 1,575,936 B of delayed
    // scaling state: 6,477,581,312 B. MXFP8 keeps both copies, 13,356,761,088 B as above.
    const plan::Plan fp8 = resolved("dp=1,precision=fp8", w, 1);
    CHECK(cost::quantized_copy_bytes(*w.shape, fp8, 1, true).value() == doctest::Approx(6477581312.0));
    cost::MemoryOptions blackwell;
    blackwell.fp8_any_layout = true;
    CHECK(cost::estimate_memory(w, fp8, blackwell).quantized_copies.value() == doctest::Approx(6477581312.0));
    const plan::Plan mx = resolved("dp=1,precision=mxfp8", w, 1);
    CHECK(cost::quantized_copy_bytes(*w.shape, mx, 1, true).value() == doctest::Approx(13356761088.0));
    // A quantize kernel over 1e6 bf16 elements: reads 2 B and writes its copies. Delayed scaling:
    // 2 + 2 x 1 = 4 B an element on Hopper, 2 + 1 = 3 B on Blackwell; current scaling reads the
    // input once more for its amax (5 and 4 B); MXFP8 writes two 1.03125 B copies on either.
    using plan::Fp8Recipe;
    using plan::Precision;
    constexpr auto kOperand = cost::QuantizedTensor::kOperand;
    CHECK(cost::quantize_cost(1e6, 2.0, Precision::kFp8, Fp8Recipe::kDelayed, false, kOperand).bytes ==
          doctest::Approx(4e6));
    CHECK(cost::quantize_cost(1e6, 2.0, Precision::kFp8, Fp8Recipe::kDelayed, true, kOperand).bytes ==
          doctest::Approx(3e6));
    CHECK(cost::quantize_cost(1e6, 2.0, Precision::kFp8, Fp8Recipe::kCurrent, false, kOperand).bytes ==
          doctest::Approx(6e6));
    CHECK(cost::quantize_cost(1e6, 2.0, Precision::kFp8, Fp8Recipe::kCurrent, true, kOperand).bytes ==
          doctest::Approx(5e6));
    CHECK(cost::quantize_cost(1e6, 2.0, Precision::kMxfp8, Fp8Recipe::kDelayed, true, kOperand).bytes ==
          doctest::Approx(1e6 * (2.0 + 2.0 * 1.03125)));
    // Kernels: delayed scaling and MXFP8 cast in one; current scaling computes the amax, turns it
    // into the scale and casts (Float8CurrentScalingQuantizer::quantize_impl: three launches).
    CHECK(cost::quantize_cost(1e6, 2.0, Precision::kFp8, Fp8Recipe::kDelayed, true, kOperand).kernels == 1.0);
    CHECK(cost::quantize_cost(1e6, 2.0, Precision::kFp8, Fp8Recipe::kCurrent, true, kOperand).kernels == 3.0);
    CHECK(cost::quantize_cost(1e6, 2.0, Precision::kMxfp8, Fp8Recipe::kDelayed, true, kOperand).kernels == 1.0);
  }

  TEST_CASE(
      "an nvfp4 cast reads its tensor for the amax first, and a Linear's operand once more for the Hadamard cast") {
    // NVFP4BlockScaling scales each 16-value block by an E4M3 figure and the whole tensor by one
    // FP32 figure, so TE's NVFP4Quantizer (quantize_impl, transformer_engine/pytorch/csrc/
    // quantizer.cpp) reads the tensor for its amax before any cast. A Linear's input or output
    // gradient then takes a row-wise cast and a column-wise Hadamard-transformed cast, each reading
    // it; a GroupedLinear casts both ways in one grouped kernel; a weight (2D blocks, no transform)
    // in one. Over 1e6 bf16 elements, each copy 0.5 + 1/16 = 0.5625 B an element:
    //   Linear operand: 3 reads x 2 B + 2 copies x 0.5625 B = 7.125 B, 3 kernels;
    //   grouped operand, weight: 2 x 2 + 2 x 0.5625 = 5.125 B, 2 kernels.
    using cost::QuantizedTensor;
    using plan::Fp8Recipe;
    using plan::Precision;
    const auto cast = [](QuantizedTensor t) {
      return cost::quantize_cost(1e6, 2.0, Precision::kNvfp4, Fp8Recipe::kDelayed, true, t);
    };
    CHECK(cast(QuantizedTensor::kOperand).bytes == doctest::Approx(7.125e6));
    CHECK(cast(QuantizedTensor::kOperand).kernels == 3.0);
    CHECK(cast(QuantizedTensor::kGroupedOperand).bytes == doctest::Approx(5.125e6));
    CHECK(cast(QuantizedTensor::kGroupedOperand).kernels == 2.0);
    CHECK(cast(QuantizedTensor::kWeight).bytes == doctest::Approx(5.125e6));
    CHECK(cast(QuantizedTensor::kWeight).kernels == 2.0);
    // MXFP8 has no per-tensor scale: one kernel whatever the tensor, 2 + 2 x 1.03125 B.
    for (const QuantizedTensor t :
         {QuantizedTensor::kOperand, QuantizedTensor::kGroupedOperand, QuantizedTensor::kWeight}) {
      const cost::QuantizeCost mx = cost::quantize_cost(1e6, 2.0, Precision::kMxfp8, Fp8Recipe::kDelayed, true, t);
      CHECK(mx.kernels == 1.0);
      CHECK(mx.bytes == doctest::Approx(4.0625e6));
    }
  }

  TEST_CASE(
      "fp8 runs the layers' linear GEMMs quantized (fprop, dgrad, wgrad) and the attention core and logits in bf16") {
    const workload::Workload w = llama2_7b();
    const plan::Plan fp8 = resolved("dp=1,precision=fp8,flash=on", w, 1);
    const cost::OperatorContext ctx = cost::operator_context(fp8);
    int quantized = 0, casts = 0;
    for (const cost::Operator& op : cost::layer_operators(*w.shape, ctx)) {
      if (op.kind == cost::OpKind::kGemm && op.low_precision) ++quantized;
      if (op.name == "quantize GEMM input" || op.name == "quantize output gradient") ++casts;
      if (op.kind == cost::OpKind::kFusedAttention) CHECK_FALSE(op.low_precision);
    }
    // 4 linears (QKV, output projection, gate+up, down) x 3 GEMMs (TE DelayedScaling's default
    // override_linear_precision = (False, False, False): none of fprop, dgrad, wgrad left in 16-bit).
    CHECK(quantized == 12);
    // One cast of each linear's input before its forward, one of its output gradient before its backward.
    CHECK(casts == 8);
    for (const cost::Operator& op : cost::head_operators(*w.shape, ctx)) {
      if (op.kind == cost::OpKind::kGemm) CHECK_FALSE(op.low_precision);  // the output layer is not a TE module
    }
    // Under bf16 nothing is quantized and no cast runs.
    for (const cost::Operator& op :
         cost::layer_operators(*w.shape, cost::operator_context(resolved("dp=1,flash=on", w, 1)))) {
      CHECK_FALSE(op.low_precision);
      CHECK(op.name != "quantize GEMM input");
    }
  }

  TEST_CASE(
      "under sequence parallel the tensors a linear gathers are quantized on this rank's shard, before the gather") {
    // Llama-2 7B at tp = 2, sequence 4096, micro-batch 1, fp8. Without sequence parallel every
    // rank holds all 4096 tokens: the forward casts QKV's input 4096 x 4096 = 16,777,216, the
    // output projection's 4096 x 2048 = 8,388,608, gate+up's 16,777,216 and down's 4096 x 5504 =
    // 22,544,384 (64,487,424 in all); the backward casts the output gradients of down 4096 x 4096,
    // gate+up 4096 x 11008, the output projection 4096 x 4096 and QKV 4096 x 6144 (103,809,024).
    // With sequence parallel Transformer Engine gathers QKV's and gate+up's input and the down and
    // output projections' output gradient over the 2 ranks, and casts each before the gather
    // (linear.py, gather_along_first_dim with the quantizer): those four halve, to 47,710,208 and
    // 87,031,808.
    const workload::Workload w = llama2_7b();
    const auto casts = [&](const std::string& plan) {
      std::pair<double, double> sums{0.0, 0.0};
      for (const cost::Operator& op : cost::layer_operators(*w.shape, cost::operator_context(resolved(plan, w, 2)))) {
        if (op.name == "quantize GEMM input") sums.first += op.elements;
        if (op.name == "quantize output gradient") sums.second += op.elements;
      }
      return sums;
    };
    const auto plain = casts("dp=1,tp=2,precision=fp8,flash=on,seq=4096");
    CHECK(plain.first == doctest::Approx(64487424.0));
    CHECK(plain.second == doctest::Approx(103809024.0));
    const auto sp = casts("dp=1,tp=2,sp=on,precision=fp8,flash=on,seq=4096");
    CHECK(sp.first == doctest::Approx(47710208.0));
    CHECK(sp.second == doctest::Approx(87031808.0));
  }

  TEST_CASE(
      "a block-scaled GEMM swizzles both operands' scales first: three launches from one call, per-tensor fp8 one") {
    // Transformer Engine's GEMM call rewrites an MXFP8 or NVFP4 operand's compact scales into the
    // tensor cores' swizzled order with one nvte_swizzle_scaling_factors launch per operand
    // (transformer_engine/pytorch/csrc/extensions/swizzle.cpp, NVTE_MXFP8_1D_SCALING and
    // NVTE_NVFP4_1D_SCALING); a per-tensor fp8 scale is one number and needs none.
    using plan::Precision;
    CHECK(cost::scale_swizzle_kernels(Precision::kMxfp8) == 2.0);
    CHECK(cost::scale_swizzle_kernels(Precision::kNvfp4) == 2.0);
    CHECK(cost::scale_swizzle_kernels(Precision::kFp8) == 0.0);
    CHECK(cost::scale_swizzle_kernels(Precision::kBf16) == 0.0);
    const workload::Workload w = llama2_7b();
    const auto launches = [&](const std::string& text) {
      double kernels = 0.0, calls = 0.0;
      for (const cost::Operator& op : cost::layer_operators(*w.shape, cost::operator_context(resolved(text, w, 1)))) {
        if (op.kind != cost::OpKind::kGemm || !op.low_precision) continue;
        kernels += op.kernels;
        calls += op.host_calls.value_or(op.kernels);
      }
      return std::pair{kernels, calls};
    };
    // 4 linears x 3 GEMMs (fprop, dgrad, wgrad) = 12 quantized GEMM calls; each block-scaled one
    // launches 1 GEMM + 2 swizzles: 36 kernels from 12 calls. Per-tensor fp8: 12 and 12.
    CHECK(launches("dp=1,precision=mxfp8,flash=on") == std::pair{36.0, 12.0});
    CHECK(launches("dp=1,precision=nvfp4,flash=on") == std::pair{36.0, 12.0});
    CHECK(launches("dp=1,precision=fp8,flash=on") == std::pair{12.0, 12.0});
    CHECK(launches("dp=1,precision=fp8,fp8-recipe=current,flash=on") == std::pair{12.0, 12.0});
  }

  TEST_CASE("a quantized GEMM runs at the fp8 peak, a 16-bit GEMM of the same plan at the bf16 peak") {
    topology::GpuSpec h100;
    h100.name = "H100-SXM5-80GB";
    h100.sm_count = 132;
    h100.memory_bandwidth = BytesPerSecond(3.35e12);
    h100.peak_fp32 = FlopsPerSecond(67e12);
    h100.peak_bf16 = FlopsPerSecond(989.4e12);
    h100.peak_fp8 = FlopsPerSecond(1978.9e12);
    cost::KernelParams params;
    params.gemm_efficiency = 0.8;
    params.gemm_efficiency_bf16 = 0.8;
    params.memory_efficiency = 0.88;
    cost::Operator op;
    op.kind = cost::OpKind::kGemm;
    op.gemm = {1.0, 8192.0, 8192.0, 8192.0};  // tile-aligned: quantization 1 on any SM count
    op.flops = Flops(2.0 * 8192.0 * 8192.0 * 8192.0);
    op.bytes = Bytes(3.0 * 8192.0 * 8192.0 * 2.0);
    // 2 x 8192^3 = 1.0995e12 FLOP. At 0.8 x 1978.9e12: 0.69455 ms; at 0.8 x 989.4e12: 1.38916 ms.
    // The HBM time (402.7 MB / (0.88 x 3.35e12) = 0.137 ms) is below both.
    op.low_precision = true;
    const double quantized = cost::time_operator(op, h100, plan::Precision::kFp8, params).gpu.value();
    op.low_precision = false;
    const double sixteen = cost::time_operator(op, h100, plan::Precision::kFp8, params).gpu.value();
    CHECK(quantized == doctest::Approx(1.0995116e12 / (0.8 * 1978.9e12)).epsilon(1e-4));
    CHECK(sixteen == doctest::Approx(1.0995116e12 / (0.8 * 989.4e12)).epsilon(1e-4));
    // Each precision at its own efficiency (the GPU file's gemm.fp8 and gemm.bf16): at 0.6 for
    // bf16, the 16-bit GEMM takes 1.0995e12 / (0.6 x 989.4e12) = 1.85221 ms; the fp8 one is unmoved.
    params.gemm_efficiency_bf16 = 0.6;
    CHECK(cost::time_operator(op, h100, plan::Precision::kFp8, params).gpu.value() ==
          doctest::Approx(1.0995116e12 / (0.6 * 989.4e12)).epsilon(1e-4));
    op.low_precision = true;
    CHECK(cost::time_operator(op, h100, plan::Precision::kFp8, params).gpu.value() == doctest::Approx(quantized));
  }

  TEST_CASE("the GPU must have the precision's peak: mxfp8 and nvfp4 are refused on Hopper") {
    topology::GpuSpec h100;
    h100.name = "H100-SXM5-80GB";
    h100.peak_bf16 = FlopsPerSecond(989.4e12);
    h100.peak_fp8 = FlopsPerSecond(1978.9e12);
    CHECK_NOTHROW(cost::check_precision_supported(h100, plan::Precision::kFp8, "dgx-h100.json"));
    CHECK_THROWS_AS(cost::check_precision_supported(h100, plan::Precision::kMxfp8, "dgx-h100.json"), InputError);
    CHECK_THROWS_AS(cost::check_precision_supported(h100, plan::Precision::kNvfp4, "dgx-h100.json"), InputError);
  }
}

}  // namespace low_precision_test
