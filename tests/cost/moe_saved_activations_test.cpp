// What an MoE layer keeps for its backward, and which of its GEMMs run quantized, derived by hand
// from Megatron-Core and Transformer Engine as the Megatron-Bridge recipes run them:
// - the experts multiply each row by its routing weight inside the activation
//   (megatron/core/transformer/moe/experts.py, activation_func_with_probs), so the unpermute after
//   the combine is a plain sum and keeps nothing;
// - under fp8/mxfp8/nvfp4 the grouped expert GEMMs and the shared expert's linears run in the
//   low-precision format (TE GroupedLinear and Linear under fp8_autocast) and keep their inputs'
//   quantized copies, as the dense linears do; the router's GEMM stays in 16-bit;
// - a grouped GEMM is one cuBLAS GEMM per local expert (Transformer Engine's multi-stream backend);
// - in 16-bit the shared expert's first linear keeps the very tensor the router keeps (both read
//   the MoE layer's input), so it adds nothing of its own.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/cost/low_precision.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/operator_lookup.hpp"

namespace moe_saved_activations_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

// 2 layers, h = 1024, s = 1024, 4 routed experts of 2048, top-2, gated, no shared expert.
workload::Workload tiny() { return workload::load_workload(kSource / "tests/cost/data/moe-2gpu.json"); }

std::vector<cost::Operator> moe_layer(const workload::Workload& w, const std::string& text) {
  const plan::Plan p = plan::resolve(plan::parse_plan(text), w, 2);
  plan::validate(p, w, 2);
  cost::OperatorContext c = cost::operator_context(p);
  c.kind.moe = true;
  return cost::layer_operators(*w.shape, c);
}

// Bytes the MoE block's forward operators keep (router, permute, experts, unpermute, shared experts).
double moe_saved_bytes(const std::vector<cost::Operator>& ops) {
  return test::forward_saved_bytes(ops, {"router", "token ", "expert ", "shared expert"});
}

}  // namespace

TEST_SUITE("cost.moe_saved_activations") {
  // dp=2, ep=2, mbs=1, s=1024: a rank routes 1024 tokens, top-2, and its 2 experts take 2048 rows.
  TEST_CASE("bf16: the router's input, its weights, the experts' inputs and SwiGLU's, the unpermute keeps nothing") {
    const auto ops = moe_layer(tiny(), "dp=2,ep=2,flash=on");
    CHECK(test::forward_op(ops, "token unpermute (combine)").saved.value() == 0.0);
    // A rank's 4 / ep = 2 experts: Transformer Engine's grouped GEMM launches one cuBLAS GEMM each.
    CHECK(test::forward_op(ops, "expert gate+up (grouped)").kernels == 2.0);
    CHECK(test::forward_op(ops, "expert gate+up (grouped)").host_calls == 1.0);
    CHECK(test::forward_op(ops, "router").kernels == 1.0);
    // router input 1024 x 1024 x 2 = 2,097,152; its weights 1024 x 4 x 2 = 8,192; gate+up input
    // 2048 x 1024 x 2 = 4,194,304; SwiGLU's gate and up 2 x 2048 x 2048 x 2 = 16,777,216; down
    // input 2048 x 2048 x 2 = 8,388,608: 31,465,472 B.
    CHECK(moe_saved_bytes(ops) == 31465472.0);
  }

  TEST_CASE("fp8: the grouped expert GEMMs run in fp8 and keep 1-byte inputs") {
    const auto ops = moe_layer(tiny(), "dp=2,ep=2,flash=on,precision=fp8");
    const cost::Operator up = test::forward_op(ops, "expert gate+up (grouped)");
    CHECK(up.low_precision);
    CHECK(up.kernels == 2.0);  // one per-tensor scale an operand: no swizzle before the expert GEMMs
    CHECK(test::forward_op(ops, "expert down (grouped)").low_precision);
    CHECK_FALSE(test::forward_op(ops, "router").low_precision);
    CHECK(up.saved.value() == 2048.0 * 1024.0);
    CHECK(test::forward_op(ops, "expert down (grouped)").saved.value() == 2048.0 * 2048.0);
    // 2,097,152 + 8,192 + 2,097,152 + 16,777,216 + 4,194,304 = 25,174,016 B.
    CHECK(moe_saved_bytes(ops) == 25174016.0);
    // One quantize kernel for each expert GEMM's input (2048 x 1024 and 2048 x 2048 elements) and
    // each output gradient in the backward.
    int forward_casts = 0;
    int backward_casts = 0;
    for (const cost::Operator& op : ops) {
      if (op.name == "quantize expert input") ++forward_casts;
      if (op.name == "quantize expert output gradient") ++backward_casts;
    }
    CHECK(forward_casts == 2);
    CHECK(backward_casts == 2);
    // On an H100 a quantized GEMM runs at the fp8 dense peak: 1,979 TFLOP/s (NVIDIA H100 datasheet, SXM).
    const topology::Topology t = topology::load_topology(kSource / "topologies/dgx-h100.json");
    CHECK(cost::gemm_peak(t.gpu(), plan::Precision::kFp8, up).value() == doctest::Approx(1979e12).epsilon(0.01));
  }

  TEST_CASE("mxfp8: each kept element carries its share of an E8M0 scale per 32") {
    const auto ops = moe_layer(tiny(), "dp=2,ep=2,flash=on,precision=mxfp8");
    // The grouped GEMM swizzles each operand's scales over both local experts in one launch
    // (Transformer Engine's multi_tensor_swizzle_scales_for_gemm): 2 expert GEMMs + 2 swizzles,
    // all from one framework call.
    CHECK(test::forward_op(ops, "expert gate+up (grouped)").kernels == 4.0);
    CHECK(test::forward_op(ops, "expert gate+up (grouped)").host_calls == 1.0);
    CHECK(test::forward_op(ops, "expert gate+up (grouped)").saved.value() == 2048.0 * 1024.0 * (1.0 + 1.0 / 32.0));
    CHECK(test::forward_op(ops, "expert down (grouped)").saved.value() == 2048.0 * 2048.0 * (1.0 + 1.0 / 32.0));
  }

  TEST_CASE("a shared expert: nothing of its own in bf16 at its first linear, the quantized copy in fp8") {
    auto w = tiny();
    w.shape->moe->shared_experts = 1;
    w.shape->moe->shared_ffn = 1024;
    const auto bf16 = moe_layer(w, "dp=2,ep=2,flash=on");
    const auto fp8 = moe_layer(w, "dp=2,ep=2,flash=on,precision=fp8");
    // bf16: the router already keeps the 1024 x 1024 input; the shared SwiGLU keeps
    // 2 x 1024 x 1024 x 2 = 4,194,304 and the shared down input 1024 x 1024 x 2 = 2,097,152.
    CHECK(test::forward_op(bf16, "shared expert gate+up").saved.value() == 0.0);
    CHECK(test::forward_op(bf16, "shared expert down").saved.value() == 2097152.0);
    // fp8: the gate+up keeps its own 1-byte copy, 1024 x 1024; the down input 1024 x 1024 x 1.
    CHECK(test::forward_op(fp8, "shared expert gate+up").saved.value() == 1048576.0);
    CHECK(test::forward_op(fp8, "shared expert down").saved.value() == 1048576.0);
    CHECK(test::forward_op(fp8, "shared expert gate+up").low_precision);
  }
}

}  // namespace moe_saved_activations_test
