// GPT-OSS's experts as Megatron-Core runs them (moe/experts.py, TEGroupedMLP): the down
// projection's bias is not added in the grouped GEMM (linear_fc2 has skip_bias_add=True) but
// after it, weighted by each row's routing probability, one expert at a time in eager PyTorch
// (_apply_bias: torch.cat([t + b * p for t, b, p in zip(split rows, biases, split probs)])); the
// GLU's clamp (activation_func_clamp_value) runs before the fused activation, outside it
// (weighted_bias_quick_geglu_impl: two clamps and a cat); and a model whose experts carry biases
// cannot fuse the attention's bias with its residual add (TEGroupedMLP asserts
// bias_dropout_fusion off). Sizes derived by hand on a 4-expert shape.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "stepcast/cost/operators.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/operator_lookup.hpp"

namespace expert_bias_test {

using namespace stepcast;
using test::find_op;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

std::vector<cost::Operator> moe_layer(const std::string& file, const std::string& text) {
  const workload::Workload w = workload::load_workload(kSource / "tests/cost/data" / file);
  const plan::Plan p = plan::resolve(plan::parse_plan(text), w, 2);
  plan::validate(p, w, 2);
  cost::OperatorContext c = cost::operator_context(p);
  c.kind.moe = true;
  return cost::layer_operators(*w.shape, c);
}

constexpr std::string_view kBias = "expert down bias x routing weight";
constexpr std::string_view kBiasBack = "expert down bias x routing weight backward";
constexpr std::string_view kClamp = "expert glu clamp";
constexpr std::string_view kClampBack = "expert glu clamp backward";
constexpr std::string_view kAttentionBias = "output projection bias add";

}  // namespace

TEST_SUITE("cost.expert_bias") {
  // dp=2, ep=2: a rank routes b s = 1024 tokens x top-2 = 2048 rows over its 2 local experts
  // (1024 each); h = 1024, expert ffn 2048 (gate+up 4096).
  TEST_CASE("the down bias, weighted by the routing probability, per local expert in 16-bit") {
    const auto ops = moe_layer("moe-biased-2gpu.json", "dp=2,ep=2,flash=on");
    const cost::Operator* bias = find_op(ops, kBias, cost::OpPass::kForward);
    REQUIRE(bias != nullptr);
    // Over the down projection's 2048 x 1024 = 2,097,152 outputs: b * p writes one tensor, t + b p
    // reads two and writes one, the cat reads and writes one: 6 x 2 bytes each = 25,165,824 bytes.
    CHECK(bias->elements == 2097152.0);
    CHECK(bias->bytes.value() == 25165824.0);
    // Two kernels an expert and the cat: 2 x 2 + 1.
    CHECK(bias->kernels == 5.0);
    CHECK(bias->saved.value() == 0.0);  // it keeps the probabilities and biases only, a row's value each
    // The backward: the bias gradient (grad x p, then a sum over rows: read, write, read) and the
    // probability gradient (grad x b, then a sum over h: read, write, read) of each expert, and the
    // cat that joins the experts' output gradients (split's backward): 8 x 2 bytes per output.
    const cost::Operator* back = find_op(ops, kBiasBack, cost::OpPass::kBackward);
    REQUIRE(back != nullptr);
    CHECK(back->bytes.value() == 33554432.0);
    CHECK(back->kernels == 9.0);  // 4 an expert and the cat
  }

  TEST_CASE("the clamp before the fused GLU: two clamps and a cat over the gate+up output") {
    const auto ops = moe_layer("moe-biased-2gpu.json", "dp=2,ep=2,flash=on");
    const cost::Operator* clamp = find_op(ops, kClamp, cost::OpPass::kForward);
    REQUIRE(clamp != nullptr);
    // 2048 rows x 4096 = 8,388,608 values: each clamp reads and writes its half (2 streams over
    // the whole), the cat reads and writes the whole (2 more): 4 x 2 bytes = 67,108,864 bytes.
    CHECK(clamp->elements == 8388608.0);
    CHECK(clamp->bytes.value() == 67108864.0);
    CHECK(clamp->kernels == 3.0);
    // Autograd keeps the clamps' input for their masks, beside the fused GLU's own (the cat's output).
    CHECK(clamp->saved.value() == 16777216.0);
    // Backward: each clamp's gradient reads the gradient and the input and writes (3 streams), and
    // chunk's backward joins the two halves (2 more): 5 x 2 bytes.
    const cost::Operator* back = find_op(ops, kClampBack, cost::OpPass::kBackward);
    REQUIRE(back != nullptr);
    CHECK(back->bytes.value() == 83886080.0);
    CHECK(back->kernels == 3.0);
  }

  TEST_CASE("under moe_act recompute the clamp runs again and keeps nothing") {
    const auto ops =
        moe_layer("moe-biased-2gpu.json", "dp=2,ep=2,flash=on,recompute=selective,recompute-modules=moe_act");
    const cost::Operator* clamp = find_op(ops, kClamp, cost::OpPass::kForward);
    REQUIRE(clamp != nullptr);
    CHECK(clamp->saved.value() == 0.0);
    const cost::Operator* again = find_op(ops, kClamp, cost::OpPass::kRecompute);
    REQUIRE(again != nullptr);
    CHECK(again->bytes.value() == 67108864.0);
    // The bias is applied after the checkpointed activation and the down GEMM: not again.
    CHECK(find_op(ops, kBias, cost::OpPass::kRecompute) == nullptr);
  }

  TEST_CASE("the attention's bias is its own add before the residual add") {
    const auto ops = moe_layer("moe-biased-2gpu.json", "dp=2,ep=2,flash=on");
    const cost::Operator* add = find_op(ops, kAttentionBias, cost::OpPass::kForward);
    REQUIRE(add != nullptr);
    // 1024 tokens x h = 1024: read and write once in 16-bit = 4,194,304 bytes; no backward kernel
    // (its gradient is the incoming one; the bias's own gradient is among the bias reductions).
    CHECK(add->bytes.value() == 4194304.0);
    CHECK(find_op(ops, kAttentionBias, cost::OpPass::kBackward) == nullptr);
  }

  TEST_CASE("experts without biases or clamp run none of them") {
    const auto ops = moe_layer("moe-2gpu.json", "dp=2,ep=2,flash=on");
    for (const std::string_view name : {kBias, kClamp, kAttentionBias}) {
      CAPTURE(name);
      CHECK(find_op(ops, name, cost::OpPass::kForward) == nullptr);
    }
  }
}

}  // namespace expert_bias_test
