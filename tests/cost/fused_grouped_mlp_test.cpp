// The routed experts under Transformer Engine's fused grouped MLP (moe-fused-mlp=on), as its
// fused ops run them (transformer_engine/pytorch/ops/fused/: ForwardGroupedMLP_CuTeGEMMSwiGLU_
// MXFP8 group-quantizes the input, runs every local expert's gate+up GEMM in one CuTe DSL kernel
// whose epilogue applies SwiGLU x routing weight and writes the down GEMM's MXFP8 input row- and
// column-wise, then one kernel for the down GEMMs; BackwardGroupedMLP_CuTeGEMMDSwiGLU
// group-quantizes the down output gradient and runs the down dgrad with the SwiGLU backward and
// the cast of the gate+up gradient in its epilogue). Sizes derived by hand on a 4-expert shape.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "stepcast/cost/operators.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/operator_lookup.hpp"

namespace fused_grouped_mlp_test {

using namespace stepcast;
using test::find_op;
using test::forward_saved_bytes;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

std::vector<cost::Operator> moe_layer(const std::string& text) {
  const workload::Workload w = workload::load_workload(kSource / "tests/cost/data/moe-2gpu.json");
  const plan::Plan p = plan::resolve(plan::parse_plan(text), w, 2);
  plan::validate(p, w, 2);
  cost::OperatorContext c = cost::operator_context(p);
  c.kind.moe = true;
  return cost::layer_operators(*w.shape, c);
}

int count(const std::vector<cost::Operator>& ops, std::string_view name, cost::OpPass pass) {
  int n = 0;
  for (const cost::Operator& op : ops) n += op.name == name && op.pass == pass ? 1 : 0;
  return n;
}

constexpr std::string_view kUnfused = "dp=2,ep=2,flash=on,precision=mxfp8";
constexpr std::string_view kFused = "dp=2,ep=2,flash=on,precision=mxfp8,moe-fused-mlp=on";
// MXFP8: a byte a value and an 8-bit scale per 32 (1 + 1/32 bytes).
constexpr double kMx = 1.0 + 1.0 / 32.0;

}  // namespace

TEST_SUITE("cost.fused_grouped_mlp") {
  // dp=2, ep=2: a rank routes b s = 1024 tokens x top-2 = 2048 rows over its 2 local experts
  // (1024 each); h = 1024, expert ffn f = 2048 (gate+up 4096); the SwiGLU's output is
  // 2048 x 2048 = 4,194,304 values.
  TEST_CASE("each grouped GEMM is one kernel, not one per local expert") {
    const auto unfused = moe_layer(std::string(kUnfused));
    const auto fused = moe_layer(std::string(kFused));
    const cost::Operator* before = find_op(unfused, "expert gate+up (grouped)", cost::OpPass::kForward);
    const cost::Operator* after = find_op(fused, "expert gate+up + swiglu (fused grouped)", cost::OpPass::kForward);
    REQUIRE(before != nullptr);
    REQUIRE(after != nullptr);
    // Unfused: 2 cuBLAS GEMMs (one per local expert) and the 2 scale swizzles of a block-scaled
    // GEMM; fused: 1 kernel and the swizzles.
    CHECK(before->kernels == 4.0);
    CHECK(after->kernels == 3.0);
    const cost::Operator* wgrad = find_op(fused, "expert gate+up (grouped wgrad)", cost::OpPass::kWeightGrad);
    REQUIRE(wgrad != nullptr);
    CHECK(wgrad->kernels == 3.0);
    CHECK(after->flops.value() == before->flops.value());
  }

  TEST_CASE("the activation and the casts between the GEMMs run in the epilogues") {
    const auto unfused = moe_layer(std::string(kUnfused));
    const auto fused = moe_layer(std::string(kFused));
    CHECK(count(unfused, "expert swiglu", cost::OpPass::kForward) == 1);
    CHECK(count(fused, "expert swiglu", cost::OpPass::kForward) == 0);
    CHECK(count(fused, "expert swiglu backward", cost::OpPass::kBackward) == 0);
    // Unfused, both grouped GEMMs cast their input and their output gradient; fused, only the
    // gate+up input and the down output gradient are cast by kernels of their own.
    CHECK(count(unfused, "quantize expert input", cost::OpPass::kForward) == 2);
    CHECK(count(unfused, "quantize expert output gradient", cost::OpPass::kBackward) == 2);
    const cost::Operator* input = find_op(fused, "quantize expert input", cost::OpPass::kForward);
    const cost::Operator* gradient = find_op(fused, "quantize expert output gradient", cost::OpPass::kBackward);
    REQUIRE(input != nullptr);
    REQUIRE(gradient != nullptr);
    CHECK(count(fused, "quantize expert input", cost::OpPass::kForward) == 1);
    CHECK(count(fused, "quantize expert output gradient", cost::OpPass::kBackward) == 1);
    CHECK(input->elements == 2048.0 * 1024.0);     // the gate+up input: rows x h
    CHECK(gradient->elements == 2048.0 * 1024.0);  // the down output gradient: rows x h
  }

  TEST_CASE("the epilogues' reads and writes join their GEMMs") {
    const auto fused = moe_layer(std::string(kFused));
    const cost::Operator* up = find_op(fused, "expert gate+up + swiglu (fused grouped)", cost::OpPass::kForward);
    REQUIRE(up != nullptr);
    // Its operands, 2 x (1024 x 1024 + 1024 x 4096 + 1024 x 4096) x 2 bytes = 37,748,736, and
    // the down GEMM's MXFP8 input written row- and column-wise, 2 x 4,194,304 x 1.03125 =
    // 8,650,752: 46,399,488 bytes.
    CHECK(up->bytes.value() == doctest::Approx(37748736.0 + 2.0 * 4194304.0 * kMx));
    const cost::Operator* dgrad =
        find_op(fused, "expert down dgrad + swiglu backward (fused grouped)", cost::OpPass::kBackward);
    REQUIRE(dgrad != nullptr);
    // Its operands, 2 x (1024 x 1024 + 1024 x 2048 + 1024 x 2048) x 2 = 20,971,520; the kept
    // SwiGLU input read, 2 x 4,194,304 x 2 = 16,777,216; the gate+up output gradient written in
    // MXFP8 row- and column-wise, 2 x 2 x 4,194,304 x 1.03125 = 17,301,504.
    CHECK(dgrad->bytes.value() == doctest::Approx(20971520.0 + 16777216.0 + 4.0 * 4194304.0 * kMx));
  }

  TEST_CASE("it keeps what the unfused experts keep") {
    // The gate+up input in MXFP8 (2048 x 1024 x 1.03125 = 2,162,688), the SwiGLU's 16-bit input
    // (2 x 4,194,304 x 2 = 16,777,216) and the down GEMM's MXFP8 input (4,325,376), whichever
    // kernel holds them.
    const auto unfused = moe_layer(std::string(kUnfused));
    const auto fused = moe_layer(std::string(kFused));
    CHECK(forward_saved_bytes(fused) == doctest::Approx(forward_saved_bytes(unfused)));
    const cost::Operator* up = find_op(fused, "expert gate+up + swiglu (fused grouped)", cost::OpPass::kForward);
    REQUIRE(up != nullptr);
    CHECK(up->saved.value() == doctest::Approx(2048.0 * 1024.0 * kMx + 16777216.0));
  }
}

}  // namespace fused_grouped_mlp_test
