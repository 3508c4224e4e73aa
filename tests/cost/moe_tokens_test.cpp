// The tokens an MoE layer routes on one GPU, derived by hand: a context-parallel rank routes only
// its b s / cp tokens (Megatron-Core's token dispatchers take the layer's local hidden states), and
// sequence parallel splits them again over tp; the expert GEMM rows, the saved expert activations
// and the dispatch buffers follow; a load factor of 1.5 stretches the busiest rank's expert GEMMs.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/cost/kernel_model.hpp"
#include "stepcast/cost/moe_memory.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

#include "support/operator_lookup.hpp"
#include "support/resolved_plan.hpp"

namespace moe_tokens_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

// 2 layers, h = 1024, s = 1024, 4 routed experts, top-2, expert ffn 2048, gated: no shared expert.
workload::Workload tiny() { return workload::load_workload(kSource / "tests/cost/data/moe-2gpu.json"); }

using test::resolved;

std::vector<cost::Operator> moe_layer(const workload::Workload& w, const plan::Plan& p) {
  cost::OperatorContext c = cost::operator_context(p);
  c.kind.moe = true;
  return cost::layer_operators(*w.shape, c);
}

// The activations the routed experts keep: their GEMM inputs and the SwiGLU's two inputs.
double expert_saved_bytes(const std::vector<cost::Operator>& ops) {
  return test::forward_saved_bytes(ops, {"expert "});
}

}  // namespace

TEST_SUITE("cost.moe_tokens") {
  TEST_CASE("MoE + cp=2: the routed-expert GEMM rows halve (b s / cp x top-k over the ep group's experts)") {
    const auto w = tiny();
    // cp=1 (dp=2, ep=2): a rank holds b s = 1 x 1024 tokens and routes 1024 x top-2 = 2048 copies.
    //   The ep=2 group routes 2 x 2048 = 4096 copies to 4 experts, 1024 each (balanced); a rank
    //   holds 4 / 2 = 2 experts: 2048 rows, 1024 per expert.
    // cp=2 (dp=1, ep=2): a rank holds b s / cp = 512 tokens, 1024 copies; the group 2048 copies,
    //   512 per expert: 1024 rows, 512 per expert.
    const plan::Plan whole = resolved(w, "dp=2,ep=2,flash=on", 2);
    const plan::Plan halves = resolved(w, "cp=2,ep=2,flash=on", 2);
    CHECK(cost::routed_tokens_per_gpu(cost::operator_context(whole)) == 1024.0);
    CHECK(cost::routed_tokens_per_gpu(cost::operator_context(halves)) == 512.0);
    CHECK(cost::expert_rows_per_gpu(*w.shape, cost::operator_context(whole)) == 2048.0);
    CHECK(cost::expert_rows_per_gpu(*w.shape, cost::operator_context(halves)) == 1024.0);

    // Grouped gate+up GEMM: 2 local experts x [rows per expert, 2 x 2048] = [., 1024] x [1024, 4096];
    // FLOPs 2 x batch x m x n x k: cp=1 2 x 2 x 1024 x 4096 x 1024 = 17,179,869,184; cp=2 half.
    const cost::Operator up1 = test::forward_op(moe_layer(w, whole), "expert gate+up (grouped)");
    const cost::Operator up2 = test::forward_op(moe_layer(w, halves), "expert gate+up (grouped)");
    CHECK(up1.gemm.batch == 2.0);
    CHECK(up1.gemm.m == 1024.0);
    CHECK(up2.gemm.m == 512.0);
    CHECK(up2.gemm.n == 4096.0);
    CHECK(up2.gemm.k == 1024.0);
    CHECK(up1.flops.value() == 17179869184.0);
    CHECK(up2.flops.value() == 8589934592.0);
    // The router's scores GEMM takes the rank's own tokens: [1024 | 512, 1024] x [1024, 4].
    CHECK(test::forward_op(moe_layer(w, whole), "router").gemm.m == 1024.0);
    CHECK(test::forward_op(moe_layer(w, halves), "router").gemm.m == 512.0);
  }

  TEST_CASE("MoE + cp=2 with tp=2 and sequence parallel: a rank routes b s / (cp tp) tokens, etp gathers them") {
    const auto w = tiny();
    // tp=2, sp=on, cp=2, ep=2 on 4 GPUs (etp = tp = 2; etp x ep = 4 = tp x cp x dp): each GPU
    // routes 1 x 1024 / 2 / 2 = 256 tokens, 512 copies; the 4 GPUs route 2048 copies, 512 per
    // expert. Each expert lives on one etp pair (half its ffn width on each), a pair holds 2:
    // a GPU computes all 1024 rows of its 2 experts (512 each) on 2048 / 2 = 1024 of their width.
    const plan::Plan p = resolved(w, "tp=2,sp=on,cp=2,ep=2,flash=on", 4);
    const cost::OperatorContext c = cost::operator_context(p);
    CHECK(cost::routed_tokens_per_gpu(c) == 256.0);
    CHECK(cost::expert_rows_per_gpu(*w.shape, c) == 1024.0);
    const cost::Operator up = test::forward_op(moe_layer(w, p), "expert gate+up (grouped)");
    CHECK(up.gemm.batch == 2.0);
    CHECK(up.gemm.m == 512.0);
    CHECK(up.gemm.n == 2048.0);  // 2 x 1024 (gate and up) of each expert's half width
  }

  TEST_CASE("MoE + cp=2: expert activations and dispatch buffers halve") {
    const auto w = tiny();
    const plan::Plan whole = resolved(w, "dp=2,ep=2,flash=on", 2);
    const plan::Plan halves = resolved(w, "cp=2,ep=2,flash=on", 2);
    // Saved by the experts at cp=1 (2048 rows, h 1024, f 2048, 2 B): the gate+up input
    // 2048 x 1024 x 2 = 4,194,304; SwiGLU's gate and up 2 x 2048 x 2048 x 2 = 16,777,216; the
    // down input 2048 x 2048 x 2 = 8,388,608: 29,360,128 B per layer and micro-batch; cp=2 half.
    CHECK(expert_saved_bytes(moe_layer(w, whole)) == 29360128.0);
    CHECK(expert_saved_bytes(moe_layer(w, halves)) == 14680064.0);
    // Dispatch buffers at cp=1: sent 1024 tokens x top-2 x 1024 x 2 B = 4,194,304; received
    // 2048 rows x 1024 x 2 B = 4,194,304: 8,388,608 B. cp=2: half of each.
    CHECK(cost::moe_dispatch_buffers(*w.shape, whole).value() == 8388608.0);
    CHECK(cost::moe_dispatch_buffers(*w.shape, halves).value() == 4194304.0);
  }

  TEST_CASE("cp folds into the expert data-parallel group: edp = tp x cp x dp / (etp x ep)") {
    // Megatron-Core's parallel_state.py: expert data parallel = world / (etp x ep x pp), the
    // world being tp x cp x dp x pp. cp=2, dp=2, ep=2 on 4 GPUs: edp = 1 x 2 x 2 / (1 x 2) = 2.
    // ZeRO-1 shards the dense state over dp x cp = 4 and the expert state over edp = 2.
    const auto w = tiny();
    const plan::Plan p = resolved(w, "cp=2,dp=2,ep=2,zero=1,flash=on", 4);
    CHECK(p.expert_dp() == 2);
    const cost::ExpertSplit split = cost::expert_split(w, p);
    CHECK(split.dense_shards == 4.0);
    CHECK(split.expert_shards == 2.0);
  }

  TEST_CASE("moe-imbalance=1.5: the busiest rank's expert GEMM takes 1.5 x the rows and 1.5 x the time") {
    // Mixtral 8x7B at s = 4096 on dp=8, ep=8: a rank holds 1 expert and takes 4096 x top-2 = 8192
    // rows balanced; the busiest rank 1.5 x 8192 = 12,288 under moe-imbalance=1.5. Its gate+up
    // GEMM [m, 4096] x [4096, 28672] is compute bound on an H100, so its time less the kernel
    // overhead is FLOPs / (peak x efficiency x quantization): 1.5 x, corrected only by the tile
    // and wave quantization of the two shapes (under 1% at this size).
    const auto w = workload::load_workload(kSource / "workloads/mixtral-8x7b.json");
    const plan::Plan balanced = resolved(w, "dp=8,ep=8,flash=on,seq=4096", 8);
    const plan::Plan skewed = resolved(w, "dp=8,ep=8,flash=on,seq=4096,moe-imbalance=1.5", 8);
    const cost::Operator a = test::forward_op(moe_layer(w, balanced), "expert gate+up (grouped)");
    const cost::Operator b = test::forward_op(moe_layer(w, skewed), "expert gate+up (grouped)");
    CHECK(a.gemm.m == 8192.0);
    CHECK(b.gemm.m == 12288.0);
    CHECK(b.flops.value() == doctest::Approx(1.5 * a.flops.value()).epsilon(1e-12));

    const topology::GpuSpec h100 = topology::load_gpu_file(kSource / "topologies/gpus/h100-sxm5-80gb.json");
    const cost::KernelParams params = cost::default_kernel_params(h100, balanced);
    const cost::KernelTime ta = cost::time_operator(a, h100, plan::Precision::kBf16, params);
    const cost::KernelTime tb = cost::time_operator(b, h100, plan::Precision::kBf16, params);
    REQUIRE(ta.bound == cost::Bound::kCompute);
    REQUIRE(tb.bound == cost::Bound::kCompute);
    const double ratio = (tb.gpu - params.kernel_overhead).value() / (ta.gpu - params.kernel_overhead).value();
    const double quantization =
        cost::gemm_quantization(a.gemm, h100.sm_count) / cost::gemm_quantization(b.gemm, h100.sm_count);
    CHECK(ratio == doctest::Approx(1.5 * quantization).epsilon(1e-9));
    CHECK(ratio == doctest::Approx(1.5).epsilon(0.01));
  }
}

}  // namespace moe_tokens_test
