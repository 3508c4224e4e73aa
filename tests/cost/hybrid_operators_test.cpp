// A hybrid stack's layers through the operator list and the step's FLOPs, against a hand
// derivation from Nemotron 3 Nano's shape (tests/workload/hybrid_workload_test.cpp derives its
// parameters) and Megatron-Bridge's own FLOP count of its runs.
//
// Megatron-Bridge's performance table (shared/data/training_runs_megatron_bridge.md, Nemotron 3
// Nano, 8 GB300, 8192-token sequences) gives 40,960 tokens/s/GPU at 905 model TFLOP/s/GPU: 905e12
// / 40,960 = 22.095 GFLOP per token. Its count takes the whole s x s attention square. The hand
// count per token, forward (x 3 for the step):
//   Mamba-2 layer: in_proj and out_proj, 2 x 2688 x (3 x 4096 + 2 x 8 x 128 + 64) = 77,414,400;
//     the SSD scan 2 x (8 groups x 128 x 128 + 64 heads x 64 x (128 + 2 x 128)) = 3,407,872.
//   attention layer: 2 x (2 x 2688 x 4096 + 2 x 2688 x 256) = 46,792,704, scores over the whole
//     square 2 x 8192 keys x 32 heads x (128 + 128) = 134,217,728.
//   MoE layer: 2 x (router 2688 x 128 + 6 experts x 2 x 2688 x 1856 + shared 2 x 2688 x 3712) =
//     160,333,824.
//   logits 2 x 2688 x 131,072 = 704,643,072.
//   23 x 80,822,272 + 6 x 181,010,432 + 23 x 160,333,824 + 704,643,072 = 7,337,295,872, x 3 =
//   22.012 GFLOP: 0.4% under Megatron-Bridge's 22.095.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace hybrid_operators_test {

using namespace stepcast;

namespace {

const std::string kRoot = STEPCAST_SOURCE_DIR;

workload::Workload nano() { return workload::load_workload(kRoot + "/workloads/nemotron-3-nano.json"); }

cost::OperatorContext context(workload::Block block, bool moe, double tp) {
  cost::OperatorContext c;
  c.micro_batch = 1.0;
  c.seq = 8192.0;
  c.tp = tp;
  c.flash = true;
  c.activation_bytes = 2.0;
  c.kind.block = block;
  c.kind.moe = moe;
  return c;
}

const cost::Operator& find(const std::vector<cost::Operator>& ops, std::string_view name) {
  for (const auto& op : ops) {
    if (op.name == name) return op;
  }
  FAIL("no operator " << name);
  return ops.front();
}

bool has(const std::vector<cost::Operator>& ops, std::string_view name) {
  for (const auto& op : ops) {
    if (op.name == name) return true;
  }
  return false;
}

}  // namespace

TEST_SUITE("cost.hybrid") {
  TEST_CASE("the step's model FLOPs per token: the hand count above, within 0.5% of Megatron-Bridge's") {
    const auto w = nano();
    // flash=off prices the whole attention square, as Megatron-Bridge's count does.
    const plan::Plan p = plan::resolve(plan::parse_plan("dp=8,ep=8,mbs=4,gbs=512,seq=8192,flash=off"), w, 8);
    const double tokens = 512.0 * 8192.0;
    const double per_token = cost::step_flops(*w.shape, p).model.value() / tokens;
    CHECK(per_token == doctest::Approx(3.0 * 7'337'295'872.0));
    CHECK(per_token == doctest::Approx(905e12 / 40'960.0).epsilon(0.005));
  }

  TEST_CASE("a Mamba-2 layer at tp=2: in_proj's 10,304 columns and out_proj's 4096 rows split, no attention") {
    const auto shape = *nano().shape;
    const auto ops = cost::layer_operators(shape, context(workload::Block::kMamba, false, 2.0));
    const auto& in = find(ops, "mamba in projection");
    CHECK(in.gemm.m == 8192.0);
    CHECK(in.gemm.n == 10'304.0 / 2.0);
    CHECK(in.gemm.k == 2688.0);
    const auto& out = find(ops, "mamba out projection");
    CHECK(out.gemm.n == 2688.0);
    CHECK(out.gemm.k == 4096.0 / 2.0);
    // The scan: 64 chunks of 128 tokens; 4 groups and 32 heads on this rank.
    const auto& scores = find(ops, "ssd chunk scores");
    CHECK(scores.gemm.batch == 64.0 * 4.0);
    CHECK(scores.flops.value() == doctest::Approx(2.0 * 8192.0 * 4.0 * 128.0 * 128.0));
    CHECK_FALSE(has(ops, "flash attention"));
    CHECK_FALSE(has(ops, "router"));
  }

  // The scan's backward as mamba_ssm runs it (ssd_combined.py, _mamba_chunk_scan_combined_bwd,
  // under MambaSplitConv1dScanCombinedFn.backward), per chunk of Q = 128 tokens of Nano (8 groups,
  // 64 heads, N = 128, P = 64), in multiply-adds: scores-shaped Q x Q x N a group, 8 x 128^3 =
  // 16,777,216; chunk-state-shaped N x P x Q a head, 64 x 128 x 64 x 128 = 67,108,864; output-shaped
  // Q x P x (Q + N) a head, 134,217,728; Q x Q x P a head, 67,108,864. The forward runs one of the
  // first three: 218,103,808. The backward recomputes CB (_bmm_chunk_fwd) and the chunk states
  // (_chunk_state_fwd), then dstates (_chunk_scan_bwd_dstates), dB (_chunk_state_bwd_db) and dC
  // (_chunk_scan_bwd_dC), all chunk-state-shaped, dx (_chunk_scan_chunk_state_bwd_dx),
  // output-shaped, dCB (_chunk_scan_bwd_dcb) and the decay's gradient
  // (_chunk_scan_bwd_ddAcs_stable), Q x Q x P, and dB and dC through CB (_bmm_chunk_bwd, twice),
  // scores-shaped: 3 x 16,777,216 + 4 x 67,108,864 + 134,217,728 + 2 x 67,108,864 = 587,202,560.
  TEST_CASE("a Mamba-2 layer's backward: mamba_ssm's recomputed and gradient products, 587,202,560 a chunk") {
    const auto shape = *nano().shape;
    const auto ops = cost::layer_operators(shape, context(workload::Block::kMamba, false, 1.0));
    double forward = 0.0;
    double backward = 0.0;
    for (const auto& op : ops) {
      if (op.name.rfind("ssd", 0) != 0 || op.kind != cost::OpKind::kGemm) continue;
      (op.pass == cost::OpPass::kForward ? forward : backward) += op.flops.value();
    }
    const double chunks = 8192.0 / 128.0;
    CHECK(forward == doctest::Approx(2.0 * chunks * 218'103'808.0));
    CHECK(backward == doctest::Approx(2.0 * chunks * 587'202'560.0));
    // The conv1d runs again before its backward (causal_conv1d_fwd in the same backward).
    CHECK(has(ops, "mamba conv1d recompute"));
    CHECK(find(ops, "mamba conv1d recompute").bytes.value() == find(ops, "mamba conv1d + silu").bytes.value());
  }

  TEST_CASE("an attention layer has no MLP and an MoE layer no attention: one norm each") {
    const auto shape = *nano().shape;
    const auto attention = cost::layer_operators(shape, context(workload::Block::kAttention, false, 1.0));
    CHECK(has(attention, "flash attention"));
    CHECK_FALSE(has(attention, "mlp down projection"));
    CHECK_FALSE(has(attention, "post-attention norm"));
    const auto moe = cost::layer_operators(shape, context(workload::Block::kMlp, true, 1.0));
    CHECK(has(moe, "router"));
    CHECK(has(moe, "input norm"));
    CHECK_FALSE(has(moe, "qkv projection"));
    CHECK_FALSE(has(moe, "post-attention norm"));
  }

  TEST_CASE("layer_kinds counts a hybrid stack's layers by its pattern") {
    const auto shape = *nano().shape;
    const auto kinds = cost::layer_kinds(shape, 0, shape.layers);
    REQUIRE(kinds.size() == 3);
    CHECK(kinds[0].first.block == workload::Block::kMamba);
    CHECK(kinds[0].second == 23);
    CHECK(kinds[1].first.block == workload::Block::kAttention);
    CHECK(kinds[1].second == 6);
    CHECK(kinds[2].first.block == workload::Block::kMlp);
    CHECK(kinds[2].first.moe);
    CHECK(kinds[2].second == 23);
    // The first five layers, MEMEM: 3 Mamba-2 and 2 MoE.
    const auto first = cost::layer_kinds(shape, 0, 5);
    REQUIRE(first.size() == 2);
    CHECK(first[0].second == 3);
    CHECK(first[1].second == 2);
  }
}

}  // namespace hybrid_operators_test
