// LatentMoE (Nemotron 3 Super) through the operator list, the dispatch and the step's FLOPs,
// against a hand derivation from its shape (tests/workload/hybrid_workload_test.cpp derives its
// parameters) and Megatron-Bridge's own FLOP count of its runs.
//
// One micro-batch of 8192 tokens on a rank of ep = 64, tp = 1: the router reads all 8192 tokens
// at h = 4096; fc1_latent_proj takes them to the 1024 latent (8192 x 1024 x 4096) before the
// permute, which copies each 22 times: 8192 x 22 x 1024 elements, and the dispatch sends those
// at 2 bytes, 369,098,752 B (352 MiB, where the hidden width would send 4 x as much). The rank's
// 512 / 64 = 8 experts take 8192 x 22 = 180,224 rows, 22,528 each: up 22,528 x 2688 x 1024
// (squared ReLU, ungated), down 22,528 x 1024 x 2688; fc2_latent_proj takes the combined 8192
// tokens back to h (8192 x 4096 x 1024).
//
// Megatron-Bridge's performance table (shared/data/training_runs_megatron_bridge.md, Nemotron 3
// Super, 64 GB300, MXFP8) gives 9,728 tokens/s/GPU at 827 model TFLOP/s/GPU: 85.01 GFLOP per
// token. The hand count per token, forward (x 3 for the step), attention over the causal half:
//   Mamba-2 layer: in_proj and out_proj 2 x 4096 x (3 x 8192 + 2 x 8 x 128 + 128) = 219,152,384;
//     the SSD scan 2 x (8 x 128 x 128 + 128 x 64 x (128 + 2 x 128)) = 6,553,600.
//   attention layer: 2 x (2 x 4096 x 4096 + 2 x 4096 x 256) = 71,303,168; scores over the causal
//     half 8192 keys x 32 heads x (128 + 128) = 67,108,864.
//   MoE layer: 2 x (router 2,097,152 + latent projections 8,388,608 + 22 experts x 2 x 1024 x
//     2688 + shared 2 x 4096 x 5376) = 351,272,960.
//   each of the two MTP depths: 2 x (attention 35,651,584 + the MoE MLP 175,636,480 + its
//     projection 2 x 4096 x 4096) + scores 67,108,864 = 556,793,856, and the logits again.
//   logits 2 x 4096 x 131,072 = 1,073,741,824, three times (the model and two depths).
//   40 x 225,705,984 + 8 x 138,412,032 + 40 x 351,272,960 + 2 x 556,793,856 + 3 x 1,073,741,824
//   = 28,521,267,200, x 3 = 85.564 GFLOP: 0.65% over Megatron-Bridge's 85.01.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/moe_memory.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/operator_lookup.hpp"

namespace latent_moe_test {

using namespace stepcast;

namespace {

const std::string kRoot = STEPCAST_SOURCE_DIR;

workload::Workload super() { return workload::load_workload(kRoot + "/workloads/nemotron-3-super.json"); }

cost::OperatorContext moe_context() {
  cost::OperatorContext c;
  c.micro_batch = 1.0;
  c.seq = 8192.0;
  c.flash = true;
  c.activation_bytes = 2.0;
  c.kind.block = workload::Block::kMlp;
  c.kind.moe = true;
  c.experts.ep = 64.0;
  return c;
}

void check_gemm(const cost::Operator& op, double batch, double m, double n, double k) {
  CAPTURE(op.name);
  CHECK(op.gemm.batch == batch);
  CHECK(op.gemm.m == m);
  CHECK(op.gemm.n == n);
  CHECK(op.gemm.k == k);
}

}  // namespace

TEST_SUITE("cost.latent_moe") {
  TEST_CASE("the experts and the permute run on the latent, between the two latent projections") {
    const auto ops = cost::layer_operators(*super().shape, moe_context());
    check_gemm(test::forward_op(ops, "router"), 1.0, 8192.0, 512.0, 4096.0);
    check_gemm(test::forward_op(ops, "latent down projection"), 1.0, 8192.0, 1024.0, 4096.0);
    CHECK(test::forward_op(ops, "token permute (dispatch)").elements == 8192.0 * 22.0 * 1024.0);
    check_gemm(test::forward_op(ops, "expert gate+up (grouped)"), 8.0, 22'528.0, 2688.0, 1024.0);
    check_gemm(test::forward_op(ops, "expert down (grouped)"), 8.0, 22'528.0, 1024.0, 2688.0);
    check_gemm(test::forward_op(ops, "latent up projection"), 1.0, 8192.0, 4096.0, 1024.0);
    check_gemm(test::forward_op(ops, "shared expert down"), 1.0, 8192.0, 4096.0, 5376.0);
  }

  TEST_CASE("the dispatch buffers hold the latent copies: sent and received, 352 MiB each") {
    const auto w = super();
    const plan::Plan p = plan::resolve(plan::parse_plan("dp=64,ep=64,mbs=1,gbs=512,seq=8192"), w, 64);
    CHECK(cost::moe_dispatch_buffers(*w.shape, p).value() == 2.0 * 369'098'752.0);
  }

  TEST_CASE("the step's model FLOPs per token: the hand count above, within 1% of Megatron-Bridge's") {
    const auto w = super();
    // flash=on prices the causal half of the attention square, as FlashAttention computes it.
    const plan::Plan p = plan::resolve(plan::parse_plan("dp=64,ep=64,mbs=1,gbs=512,seq=8192,flash=on"), w, 64);
    const double per_token = cost::step_flops(*w.shape, p).model.value() / (512.0 * 8192.0);
    CHECK(per_token == doctest::Approx(3.0 * 28'521'267'200.0));
    CHECK(per_token == doctest::Approx(827e12 / 9'728.0).epsilon(0.01));
  }
}

}  // namespace latent_moe_test
