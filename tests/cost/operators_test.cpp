// The operator list against outside formulas: its GEMM and attention FLOPs add up to Narayanan
// et al. 2021's count (Appendix: 24bsh^2 + 4bs^2h per layer forward, backward twice that), and
// the tensors its forward keeps add up to Korthikanti et al. 2022's Table 2 (memory_test.cpp).
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/operators.hpp"
#include "support/gpt3_shape.hpp"

namespace operators_test {

using namespace stepcast;

namespace {

cost::OperatorContext context(double b, double s, double t, plan::Recompute recompute, bool flash) {
  cost::OperatorContext c;
  c.micro_batch = b;
  c.seq = s;
  c.tp = t;
  c.recompute = recompute;
  c.flash = flash;
  c.activation_bytes = 2.0;
  return c;
}

/// FLOPs of the tensor-core operators (GEMMs and fused attention) of one pass.
double tensor_flops(const std::vector<cost::Operator>& ops, cost::OpPass pass) {
  double sum = 0.0;
  for (const auto& op : ops) {
    if (op.pass == pass && op.kind != cost::OpKind::kMemory) sum += op.flops.value();
  }
  return sum;
}

}  // namespace

TEST_SUITE("cost.operators") {
  TEST_CASE(
      "a GPT-3 layer's GEMMs: forward 24bsh^2 + 4bs^2h FLOPs (Narayanan et al. 2021), backward twice, split over t") {
    const auto s = test::gpt3_shape();
    const double b = 1, seq = 2048, h = 12288;
    // By hand: 24 x 2048 x 12288^2 = 7.4217e12; 4 x 2048^2 x 12288 = 2.0616e11; sum 7.6278e12.
    const double forward = 24.0 * b * seq * h * h + 4.0 * b * seq * seq * h;
    CHECK(forward == doctest::Approx(7.6278e12).epsilon(1e-4));
    const auto ops = cost::layer_operators(s, context(b, seq, 1, plan::Recompute::kNone, false));
    CHECK(tensor_flops(ops, cost::OpPass::kForward) == doctest::Approx(forward));
    // Backward: data gradients of every GEMM and the four attention-core GEMMs; weight gradients.
    CHECK(tensor_flops(ops, cost::OpPass::kBackward) + tensor_flops(ops, cost::OpPass::kWeightGrad) ==
          doctest::Approx(2.0 * forward));
    // The weight gradients are one GEMM per linear layer, each with its forward's FLOPs: 24bsh^2.
    CHECK(tensor_flops(ops, cost::OpPass::kWeightGrad) == doctest::Approx(24.0 * b * seq * h * h));
    // Tensor parallel t = 8 gives each rank an eighth.
    const auto tp8 = cost::layer_operators(s, context(b, seq, 8, plan::Recompute::kNone, false));
    CHECK(tensor_flops(tp8, cost::OpPass::kForward) == doctest::Approx(forward / 8.0));
  }

  TEST_CASE("recompute repeats the whole forward (full) or the attention core's 4bs^2h (selective)") {
    const auto s = test::gpt3_shape();
    const double seq = 2048, h = 12288;
    const auto full = cost::layer_operators(s, context(1, seq, 1, plan::Recompute::kFull, false));
    CHECK(tensor_flops(full, cost::OpPass::kRecompute) == doctest::Approx(tensor_flops(full, cost::OpPass::kForward)));
    const auto selective = cost::layer_operators(s, context(1, seq, 1, plan::Recompute::kSelective, false));
    CHECK(tensor_flops(selective, cost::OpPass::kRecompute) == doctest::Approx(4.0 * seq * seq * h));
  }

  TEST_CASE(
      "causal FlashAttention executes half of the 4bs^2h score FLOPs forward, 2.5x that backward (Dao 2023, section "
      "4.1)") {
    const auto s = test::gpt3_shape();
    const double seq = 2048, h = 12288;
    const auto ops = cost::layer_operators(s, context(1, seq, 1, plan::Recompute::kNone, true));
    double forward = 0.0, backward = 0.0;
    for (const auto& op : ops) {
      if (op.kind != cost::OpKind::kFusedAttention) continue;
      (op.pass == cost::OpPass::kForward ? forward : backward) += op.flops.value();
    }
    CHECK(forward == doctest::Approx(0.5 * 4.0 * seq * seq * h));
    CHECK(backward == doctest::Approx(2.5 * forward));
  }

  TEST_CASE("packed documents: each n-token document's causal half square, s/n of them, one kernel over all") {
    // A 2048-token GPT-3 sequence packing 256-token documents: 8 causal squares of 256, so
    // 8 x 256^2 / 2 = 262,144 query-key pairs against the whole sequence's 2048^2 / 2 = 2,097,152,
    // an eighth; forward 2 x 262,144 x 12288 x 2 (QK^T and scores x V over h = 96 x 128) =
    // 1.2885e10 FLOPs. The kernel: 96 heads x 8 documents, 256 queries against 256 keys.
    const auto s = test::gpt3_shape();
    const double seq = 2048, h = 12288;
    cost::OperatorContext c = context(1, seq, 1, plan::Recompute::kNone, true);
    c.doc_len = 256.0;
    int kernels = 0;
    for (const auto& op : cost::layer_operators(s, c)) {
      if (op.kind != cost::OpKind::kFusedAttention) continue;
      ++kernels;
      const double forward = 2.0 * 262144.0 * h * 2.0;
      CHECK(forward == doctest::Approx(1.2885e10).epsilon(1e-4));
      CHECK(op.flops.value() == doctest::Approx(op.pass == cost::OpPass::kForward ? forward : 2.5 * forward));
      CHECK(op.gemm.batch == 96.0 * 8.0);
      CHECK(op.gemm.m == 256.0);
      CHECK(op.gemm.n == 256.0);
    }
    CHECK(kernels == 2);
    // Keys a query meets: a 256-token document's causal half, 128; within a 100-key window of it,
    // (256 x 100 - 100^2 / 2) / 256 = 80.47; a document as long as the sequence is the sequence.
    CHECK(cost::causal_keys_per_query(seq, 0.0, 256.0) == doctest::Approx(128.0));
    CHECK(cost::causal_keys_per_query(seq, 100.0, 256.0) == doctest::Approx(80.46875));
    CHECK(cost::causal_keys_per_query(seq, 0.0, 0.0) == doctest::Approx(1024.0));
    CHECK(cost::causal_keys_per_query(seq, 0.0, 4096.0) == doctest::Approx(1024.0));
  }

  TEST_CASE("grouped-query attention narrows the QKV projection to h + 2 kv d columns (Llama-2 70B: 8192 + 2 x 1024)") {
    workload::TransformerShape s = test::gpt3_shape();
    s.hidden = 8192;
    s.heads = 64;
    s.kv_heads = 8;
    const auto ops = cost::layer_operators(s, context(1, 4096, 1, plan::Recompute::kNone, true));
    const auto& qkv = ops[1];
    REQUIRE(qkv.name == "qkv projection");
    CHECK(qkv.gemm.m == 4096);
    CHECK(qkv.gemm.n == 8192 + 2 * 8 * 128);
    CHECK(qkv.gemm.k == 8192);
  }

  TEST_CASE(
      "the output layer: logits GEMM 2bshV/t FLOPs forward, the loss keeps 4bsV/t fp32 bytes (Korthikanti section "
      "4.3)") {
    const auto s = test::gpt3_shape();
    const auto ops = cost::head_operators(s, context(1, 2048, 8, plan::Recompute::kNone, true));
    double logits = 0.0, kept = 0.0;
    for (const auto& op : ops) {
      if (op.pass == cost::OpPass::kForward && op.kind == cost::OpKind::kGemm) logits += op.flops.value();
      if (op.name == "cross-entropy") kept += op.saved.value();
    }
    CHECK(logits == doctest::Approx(2.0 * 2048 * 12288 * 51200 / 8.0));
    CHECK(kept == doctest::Approx(4.0 * 2048 * 51200 / 8.0));
  }

  TEST_CASE(
      "the loss's bytes a logit: Megatron's 24, one fused kernel's 8, eager fp32's 48, and 22 for each training "
      "metric") {
    // Counted by hand for 16-bit logits. Megatron-LM's vocabulary-parallel loss: reads the logit,
    // max / exp / sum passes over an fp32 copy (4 x 4 B), then its backward reads the fp32
    // softmax and writes the 16-bit gradient: 2 + 16 + 4 + 2 = 24. A fused kernel (apex's
    // xentropy, flash-attn's loss): two reads forward, one read and one write backward: 8.
    // PyTorch eager on fp32 logits: cast (2 + 4), log_softmax (3 reads + 1 write of 4 B), forward
    // 22; backward: a zero-filled fp32 gradient (4), log_softmax's backward (read the gradient for
    // its sum, then gradient and output read and result written: 16), cast back (4 + 2): 26.
    // A training metric is another eager forward: 22.
    const auto s = test::gpt3_shape();
    const double logits = 2048.0 * 51200 / 8.0;
    const auto bytes_a_logit = [&](plan::LossKernel loss, double metrics) {
      auto c = context(1, 2048, 8, plan::Recompute::kNone, true);
      c.loss = loss;
      c.train_metrics = metrics;
      double bytes = 0.0;
      for (const auto& op : cost::head_operators(s, c)) {
        if (op.name.find("cross-entropy") != std::string::npos || op.name == "training metrics") {
          bytes += op.bytes.value();
        }
      }
      return bytes / logits;
    };
    CHECK(bytes_a_logit(plan::LossKernel::kMegatron, 0) == doctest::Approx(24.0));
    CHECK(bytes_a_logit(plan::LossKernel::kFused, 0) == doctest::Approx(8.0));
    CHECK(bytes_a_logit(plan::LossKernel::kEager, 0) == doctest::Approx(48.0));
    CHECK(bytes_a_logit(plan::LossKernel::kFused, 2) == doctest::Approx(8.0 + 2 * 22.0));
  }

  TEST_CASE("mixed-precision Adam moves 2 + 2 x 12 + 2 bytes per parameter in its update (ZeRO's 2 + 2 + 12 state)") {
    plan::Plan p;
    const auto ops = cost::optimizer_operators(1e9, p, false);
    double update = 0.0;
    for (const auto& op : ops) {
      if (op.name == "optimizer update") update = op.bytes.value();
    }
    // Reads the 2-byte gradient and the 12 bytes of fp32 master weights and moments, writes the
    // 12 back and the 2-byte working copy.
    CHECK(update == doctest::Approx(1e9 * (2.0 + 24.0 + 2.0)));
  }
}

}  // namespace operators_test
