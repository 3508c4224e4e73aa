// LoRA (peft=lora) against a hand derivation from Hu et al. 2021 (section 4.1: W frozen,
// Y = X W + X A B with A: k x r and B: r x n trained) on Llama 3 70B's shapes, with
// Megatron-Bridge's default targets (linear_qkv, linear_proj, linear_fc1, linear_fc2) and rank 32.
//
// Llama 3 70B (workloads/llama3-70b.json): h = 8192, 64 query heads and 8 kv heads of 128, SwiGLU
// ffn 28672, no biases. Its four linears per layer at tp = 1, (k, n):
//   qkv (8192, 8192 + 2 x 1024 = 10240)   k + n = 18,432
//   proj (8192, 8192)                     k + n = 16,384
//   fc1 gate+up (8192, 2 x 28672 = 57344) k + n = 65,536
//   fc2 (28672, 8192)                     k + n = 36,864
//   sum of k + n: 137,216; sum of k x n: 83,886,080 + 67,108,864 + 469,762,048 + 234,881,024
//   = 855,638,016 (the layer's 855,654,400 parameters less its two 8192-wide norms).
// Adapter parameters per layer at r = 32: 32 x 137,216 = 4,390,912.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/cost/peft.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace peft_test {

using namespace stepcast;

namespace {

const std::string kRoot = STEPCAST_SOURCE_DIR;

constexpr double kSumKPlusN = 137'216.0;
constexpr double kSumKTimesN = 855'638'016.0;
constexpr double kAdapterParamsPerLayer = 32.0 * kSumKPlusN;  // 4,390,912
constexpr double kLlama3Parameters = 70'553'706'496.0;        // 80 x 855,654,400 + 2,101,354,496

workload::Workload llama3_70b() { return workload::load_workload(kRoot + "/workloads/llama3-70b.json"); }

cost::OperatorContext context(double lora_rank) {
  cost::OperatorContext c;
  c.micro_batch = 1.0;
  c.seq = 4096.0;
  c.flash = true;
  c.activation_bytes = 2.0;
  c.lora_rank = lora_rank;
  return c;
}

double tensor_flops(const std::vector<cost::Operator>& ops, cost::OpPass pass) {
  double sum = 0.0;
  for (const auto& op : ops) {
    if (op.pass == pass && op.kind != cost::OpKind::kMemory) sum += op.flops.value();
  }
  return sum;
}

}  // namespace

TEST_SUITE("cost.peft") {
  TEST_CASE("a frozen Llama 3 70B layer: no weight gradient of its own, and each adapter adds 6 m r (k + n)") {
    const auto shape = *llama3_70b().shape;
    const auto full = cost::layer_operators(shape, context(0.0));
    const auto lora = cost::layer_operators(shape, context(32.0));
    const double m = 4096.0;
    // Full training's weight gradients: one GEMM per linear, 2 m k n each.
    CHECK(tensor_flops(full, cost::OpPass::kWeightGrad) == doctest::Approx(2.0 * m * kSumKTimesN));
    // LoRA: only the adapters' weight gradients, dB = (X A)^T dY and dA = X^T (dY B^T): 2 m r (n + k).
    CHECK(tensor_flops(lora, cost::OpPass::kWeightGrad) == doctest::Approx(2.0 * m * 32.0 * kSumKPlusN));
    // Forward: X A and (X A) B beside each frozen GEMM, 2 m r (k + n); data gradient likewise.
    const double adapter_pass = 2.0 * m * 32.0 * kSumKPlusN;
    CHECK(tensor_flops(lora, cost::OpPass::kForward) ==
          doctest::Approx(tensor_flops(full, cost::OpPass::kForward) + adapter_pass));
    CHECK(tensor_flops(lora, cost::OpPass::kBackward) ==
          doctest::Approx(tensor_flops(full, cost::OpPass::kBackward) + adapter_pass));
    CHECK(cost::adapter_parameters(lora) == doctest::Approx(kAdapterParamsPerLayer));
    CHECK(cost::adapter_parameters(full) == 0.0);
  }

  TEST_CASE("lora-targets=qkv: an adapter beside the qkv projection alone, the other three linears frozen bare") {
    // Megatron-Bridge's Llama 3 70B LoRA performance configs target linear_qkv alone (pull request
    // 2181): per layer 32 x (8192 + 10240) = 589,824 adapter parameters, and the adapter's
    // FLOPs 2 m r (k + n) = 2 x 4096 x 32 x 18,432 a pass.
    const auto shape = *llama3_70b().shape;
    cost::OperatorContext c = context(32.0);
    c.lora_targets = plan::kLoraQkv;
    const auto qkv_only = cost::layer_operators(shape, c);
    const auto full = cost::layer_operators(shape, context(0.0));
    CHECK(cost::adapter_parameters(qkv_only) == doctest::Approx(589'824.0));
    const double adapter_pass = 2.0 * 4096.0 * 32.0 * 18'432.0;
    CHECK(tensor_flops(qkv_only, cost::OpPass::kForward) ==
          doctest::Approx(tensor_flops(full, cost::OpPass::kForward) + adapter_pass));
    CHECK(tensor_flops(qkv_only, cost::OpPass::kWeightGrad) == doctest::Approx(adapter_pass));
    int adapters = 0;
    for (const auto& op : qkv_only) adapters += op.adapter ? 1 : 0;
    CHECK(adapters == 6);  // A and B forward, each's data and weight gradient
  }

  TEST_CASE("under fp8 a frozen linear keeps its 16-bit input for the adapter, not an fp8 copy") {
    const auto shape = *llama3_70b().shape;
    cost::OperatorContext c = context(32.0);
    c.precision = plan::Precision::kFp8;
    const auto ops = cost::layer_operators(shape, c);
    // The qkv projection's input: 4096 tokens x 8192 in bf16 = 67,108,864 B (full fp8 training
    // would keep its 1-byte copy, half of it).
    const auto qkv = std::find_if(ops.begin(), ops.end(), [](const cost::Operator& op) {
      return op.pass == cost::OpPass::kForward && op.kind == cost::OpKind::kGemm && op.low_precision &&
             op.gemm.n == 10240.0;
    });
    REQUIRE(qkv != ops.end());
    CHECK(qkv->saved.value() == doctest::Approx(4096.0 * 8192.0 * 2.0));
  }

  TEST_CASE("the output layer and the embedding are frozen too, with no adapter") {
    const auto shape = *llama3_70b().shape;
    for (const auto& ops :
         {cost::head_operators(shape, context(32.0)), cost::embedding_operators(shape, context(32.0))}) {
      CHECK(tensor_flops(ops, cost::OpPass::kWeightGrad) == 0.0);
      CHECK(cost::adapter_parameters(ops) == 0.0);
      for (const auto& op : ops) CHECK(op.pass != cost::OpPass::kWeightGrad);
    }
  }

  TEST_CASE("Llama 3 70B LoRA on 8 GPUs (pp=2, dp=4, distributed optimizer): frozen bf16 weights, adapter state") {
    const auto w = llama3_70b();
    const plan::Plan p = plan::resolve(plan::parse_plan("tp=1,pp=2,zero=1,mbs=1,gbs=32,seq=4096,peft=lora"), w, 8);
    plan::validate(p, w, 8);
    const auto share = cost::parameters_per_model_rank(w, p);
    // 40 layers a stage, each with 4,390,912 adapter parameters: 175,636,480.
    CHECK(share.trained == doctest::Approx(40.0 * kAdapterParamsPerLayer));
    CHECK(share.frozen == doctest::Approx(kLlama3Parameters / 2.0));
    const cost::ModelState state = cost::model_state(w, p);
    // bf16 frozen weights and adapters (2 B); bf16 adapter gradients (2 B); Adam's 12 B of fp32
    // master weights and moments for the adapters, sharded over dp = 4.
    CHECK(state.parameters.value() == doctest::Approx((kLlama3Parameters / 2.0 + 175'636'480.0) * 2.0));
    CHECK(state.gradients.value() == doctest::Approx(175'636'480.0 * 2.0));
    CHECK(state.optimizer_state.value() == doctest::Approx(175'636'480.0 * 12.0 / 4.0));
  }
  TEST_CASE("model FLOPs per token: a frozen model loses one pass of its weight GEMMs, 2 x its matmul weights") {
    // Full training against Megatron-Bridge's own count: its Llama 3 70B SFT row on GB300 at 4096
    // tokens (tests/data/runs/megatron_bridge.csv, B235) runs 2083 TFLOP/s at 4819 tokens/s/GPU,
    // 4.3225e11 FLOPs a token (causal attention counted by half, as FlashAttention runs it).
    const auto shape = *llama3_70b().shape;
    plan::Plan p = plan::parse_plan("dp=1,gbs=1,seq=4096,flash=on");
    const double full = cost::step_flops(shape, p).model.value() / 4096.0;
    CHECK(full == doctest::Approx(2083e12 / 4819.0).epsilon(0.01));
    // LoRA: no weight gradient, 2 FLOPs per matmul weight and token fewer. The matmul weights:
    // 80 x 855,638,016 + the output layer 8192 x 128,256 = 69,501,714,432.
    p.peft = plan::Peft::kLora;
    const double lora = cost::step_flops(shape, p).model.value() / 4096.0;
    CHECK(full - lora == doctest::Approx(2.0 * 69'501'714'432.0));
  }
}

}  // namespace peft_test
