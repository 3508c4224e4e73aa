// Context parallel through a hybrid's Mamba-2 layers, as Megatron-Core's MambaContextParallel runs
// it (megatron/core/ssm/mamba_context_parallel.py): before the conv1d and the scan, z, x, B, C and
// dt each go by an all-to-all from this rank's s/cp tokens of every head to the whole sequence of
// heads / (tp x cp) (B and C's groups split with the heads, or one group repeated over cp / groups
// ranks); the scan's output y comes back by one more; the backward sends the gradients the other
// way. The attention layers exchange keys and values as before; the MLP and MoE layers nothing.
// Figures derived by hand from Nemotron 3 Nano's shape (workloads/nemotron-3-nano.json): 64 heads
// of 64 (inner 4096), 8 groups of state 128, chunks of 128; 23 Mamba-2 and 6 attention layers.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "stepcast/cost/context_parallel.hpp"
#include "stepcast/cost/operators.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/operator_lookup.hpp"
#include "support/predict_plan.hpp"

namespace mamba_context_parallel_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

const workload::Workload& nano() {
  static const workload::Workload w = workload::load_workload(kSource / "workloads/nemotron-3-nano.json");
  return w;
}

plan::Plan resolved(const std::string& text, int gpus) {
  const plan::Plan p = plan::resolve(plan::parse_plan(text), nano(), gpus);
  plan::validate(p, nano(), gpus);
  return p;
}

std::vector<cost::Operator> mamba_layer(const plan::Plan& p) {
  cost::OperatorContext c = cost::operator_context(p);
  c.kind.block = workload::Block::kMamba;
  return cost::layer_operators(*nano().shape, c);
}

}  // namespace

TEST_SUITE("graph.mamba_context_parallel") {
  TEST_CASE("cp=2: z, x, y 32 MiB, B and C 8 MiB, dt 512 KiB a call, each rank's 4,096 of 8,192 tokens") {
    // S of each all-to-all: 8192 / 2 = 4096 tokens x width x 2 B. z, x and y: 4096 x 4096 x 2 =
    // 33,554,432; B, C: 4096 x 8 groups x 128 x 2 = 8,388,608; dt: 4096 x 64 heads x 2 = 524,288.
    const auto messages = cost::mamba_context_exchange(*nano().shape, resolved("cp=2,flash=on,seq=8192", 2));
    REQUIRE(messages.size() == 8);
    CHECK(messages[0].size.value() == 33554432.0);  // z, x
    CHECK(messages[0].calls == 2.0);
    CHECK(messages[1].size.value() == 8388608.0);  // B, C
    CHECK(messages[1].calls == 2.0);
    CHECK(messages[2].size.value() == 524288.0);    // dt
    CHECK(messages[3].size.value() == 33554432.0);  // y
    CHECK(messages[3].calls == 1.0);
    // Forward ones first, the backward's the same four sizes.
    double forward = 0.0;
    double backward = 0.0;
    for (const auto& m : messages) (m.forward ? forward : backward) += m.size.value() * m.calls;
    CHECK(forward == 3.0 * 33554432.0 + 2.0 * 8388608.0 + 524288.0);
    CHECK(backward == forward);
    CHECK(cost::mamba_context_exchange(*nano().shape, resolved("dp=2,flash=on,seq=8192", 2)).empty());
  }

  TEST_CASE("cp=16 over 8 groups: each group goes to 2 ranks, B and C sent twice over, 1 group a rank") {
    // 8192 / 16 = 512 tokens; the 8 groups repeated twice: 512 x 16 x 128 x 2 B = 2,097,152.
    const cost::MambaSplit split = cost::mamba_split(nano().shape->hybrid->mamba, 1.0, 16.0);
    CHECK(split.heads == 4.0);
    CHECK(split.groups == 1.0);
    CHECK(split.group_repeats == 2.0);
    // The conv1d's channels: x of 4 heads x 64 = 256, B and C of one group, 2 x 128.
    CHECK(split.conv_channels == 512.0);
    const auto messages = cost::mamba_context_exchange(*nano().shape, resolved("cp=16,flash=on,seq=8192", 16));
    CHECK(messages[1].size.value() == 2097152.0);
  }

  TEST_CASE("the scan runs the whole sequence for half the heads at cp=2: the same products, the layout copied") {
    const auto whole = mamba_layer(resolved("dp=2,flash=on,seq=8192", 2));
    const auto halves = mamba_layer(resolved("cp=2,flash=on,seq=8192", 2));
    // Chunk output: 8192 / 128 = 64 chunks x 64 heads at cp=1, x 32 at cp=2.
    CHECK(test::forward_op(whole, "ssd chunk output").gemm.batch == 4096.0);
    CHECK(test::forward_op(halves, "ssd chunk output").gemm.batch == 2048.0);
    // The conv1d over all 8192 tokens of 2048 + 2 x 4 x 128 = 3072 channels, half of cp=1's 6144.
    CHECK(test::forward_op(halves, "mamba conv1d + silu").elements == 8192.0 * 3072.0);
    CHECK(test::forward_op(whole, "mamba conv1d + silu").elements == 8192.0 * 6144.0);
    // in_proj and out_proj on this rank's 4096 tokens.
    CHECK(test::forward_op(halves, "mamba in projection").gemm.m == 4096.0);
    // Before the scan, 3 copies (a read and a write each) of what the all-to-alls send, 4096 tokens
    // x (2 x 4096 + 2 x 8 x 128 + 64) = 42,205,184 elements of 2 B, in 7 kernels (5 gathers for the
    // all-to-alls, their outputs joined, the load-balanced order undone); after it 2 copies of y's
    // 4096 x 4096 in 2.
    const cost::Operator& in = test::forward_op(halves, "mamba context-parallel layout (in)");
    CHECK(in.bytes.value() == 3.0 * 2.0 * 42205184.0 * 2.0);
    CHECK(in.kernels == 7.0);
    const cost::Operator& out = test::forward_op(halves, "mamba context-parallel layout (out)");
    CHECK(out.bytes.value() == 2.0 * 2.0 * 16777216.0 * 2.0);
    CHECK(out.kernels == 2.0);
    CHECK(test::find_op(whole, "mamba context-parallel layout (in)", cost::OpPass::kForward) == nullptr);
  }

  TEST_CASE("a step's calls: the Mamba-2 all-to-alls in the 23 Mamba-2 layers, the K/V ring in the 6 attention ones") {
    // 2 DGX B200 nodes, cp=2, dp=8, ep=8, 64 sequences: 8 micro-batches of 1. z and x: 23 layers
    // x 8 x 2 calls = 368; dt: 184; the ring's forward step (cp - 1 = 1 a layer): 6 x 8 = 48.
    const auto topo = topology::load_topology(kSource / "topologies/dgx-b200.json", 2);
    const plan::Plan p = plan::resolve(
        plan::parse_plan("dp=8,cp=2,ep=8,mbs=1,gbs=64,seq=16384,flash=on,moe-dispatcher=flex"), nano(), 16);
    plan::validate(p, nano(), 16);
    const graph::StepPrediction step = graph::predict_step(nano(), p, topo);
    CHECK(test::comm_term(step, "CP Mamba all-to-all z, x (forward)").calls.count() == 368);
    CHECK(test::comm_term(step, "CP Mamba all-to-all d(dt) (backward)").calls.count() == 184);
    CHECK(test::comm_term(step, "CP ring K/V send/recv (forward)").calls.count() == 48);
    // The scan waits for its all-to-alls: nothing hides them.
    const graph::CommTerm& zx = test::comm_term(step, "CP Mamba all-to-all z, x (forward)");
    CHECK(zx.exposed.value() == doctest::Approx(zx.time.value()));
  }
}

}  // namespace mamba_context_parallel_test
