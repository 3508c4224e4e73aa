// Context parallel and uneven pipelines in the cost model, against hand derivations: the ring's
// bytes and steps (cp=4 at 32k tokens), activation memory with cp=8 at 128k tokens against
// Korthikanti et al. 2022 and Megatron-Core's context-parallel docs, and the stage times of
// Llama 3.1 405B's 126 layers on 16 stages.
#include <doctest/doctest.h>

#include <filesystem>

#include "stepcast/cost/context_parallel.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

#include "support/gpt3_shape.hpp"
#include "support/resolved_plan.hpp"

namespace long_context_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

using test::resolved;

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

TEST_SUITE("graph.long_context") {
  TEST_CASE(
      "ring attention, cp=4 at s=32k (Llama-3 70B, tp=8): 3 forward steps of 4 MiB, 3 backward of 8 MiB and one of 4 "
      "MiB") {
    const auto w = workload::load_workload(kSource / "workloads/llama3-70b.json");
    const auto p = resolved(w, "tp=8,cp=4,flash=on,seq=32768", 32);
    // Each rank holds s/cp = 8192 tokens. K and V of one token on one tensor rank: 8 kv heads x
    // 128 head dim / tp 8 = 128 values each, 2 bytes in bf16: 2 x 128 x 2 = 512 B. The chunk a
    // ring step passes: 8192 x 512 B = 4 MiB.
    const auto msgs = cost::context_exchange(*w.shape, p);
    REQUIRE(msgs.size() == 3);
    CHECK(msgs[0].op == cost::CollectiveOp::kSendRecv);
    CHECK(msgs[0].size.value() == doctest::Approx(4.0 * kMiB));
    CHECK(msgs[0].calls == 3.0);  // cp - 1 steps: the rank's own chunk needs no transfer
    CHECK(msgs[0].overlapped);
    CHECK(msgs[1].size.value() == doctest::Approx(8.0 * kMiB));  // K/V with dK/dV in one buffer
    CHECK(msgs[1].calls == 3.0);
    CHECK(msgs[2].size.value() == doctest::Approx(4.0 * kMiB));  // dK/dV home
    CHECK(msgs[2].calls == 1.0);
    // Per layer and micro-batch a rank sends 3 x 4 + 3 x 8 + 4 = 40 MiB.
    double bytes = 0.0;
    for (const auto& m : msgs) bytes += m.size.value() * m.calls;
    CHECK(bytes == doctest::Approx(40.0 * kMiB));
  }

  TEST_CASE("a ring step exposes only what its transfer takes beyond the attention step beside it") {
    // Attention of a pass 8 ms over cp=4 ring steps: 2 ms each. Transfers of 3 ms: 1 ms each of
    // 3 steps exposed; of 1 ms: none.
    CHECK(cost::ring_exposed(Seconds(3e-3), 3.0, Seconds(8e-3), 4).value() == doctest::Approx(3e-3));
    CHECK(cost::ring_exposed(Seconds(1e-3), 3.0, Seconds(8e-3), 4).value() == 0.0);
  }

  TEST_CASE("all-gather and a2a variants: whole-sequence K/V, and Ulysses' all-to-alls of Q,K,V and O") {
    const auto w = workload::load_workload(kSource / "workloads/llama3-70b.json");
    auto p = resolved(w, "tp=8,cp=4,cp-comm=all-gather,flash=on,seq=32768", 32);
    auto msgs = cost::context_exchange(*w.shape, p);
    REQUIRE(msgs.size() == 3);
    // nccl-tests' S of the all-gather is the gathered buffer: cp x 4 MiB = 16 MiB.
    CHECK(msgs[0].op == cost::CollectiveOp::kAllGather);
    CHECK(msgs[0].size.value() == doctest::Approx(16.0 * kMiB));
    CHECK_FALSE(msgs[0].overlapped);
    // Ulysses with tp=4, cp=2 (64 heads, 8 kv heads divide 8): s/cp = 16384 tokens; per token
    // Q 8192/4 = 2048 and K, V 8 x 128 / 4 = 256 each: 2560 values x 2 B = 5120 B; S = 80 MiB.
    p = resolved(w, "tp=4,cp=2,cp-comm=a2a,flash=on,seq=32768", 8);
    msgs = cost::context_exchange(*w.shape, p);
    REQUIRE(msgs.size() == 4);
    CHECK(msgs[0].op == cost::CollectiveOp::kAllToAll);
    CHECK(msgs[0].size.value() == doctest::Approx(16384.0 * 5120.0));
    CHECK(msgs[1].size.value() == doctest::Approx(16384.0 * 2048.0 * 2.0));  // O
  }

  TEST_CASE(
      "cp=8 at 128k tokens: activations per layer are Korthikanti's 34sbh/t divided by cp (Megatron-Core context "
      "parallel)") {
    // Korthikanti et al. 2022, Table 2: with tensor and sequence parallel and no s x s scores kept
    // (selective recompute, or a fused attention kernel), a GPT layer keeps 34 sbh / t bytes.
    // Megatron-Core's context-parallel guide: each GPU holds s/cp tokens, so activations divide by
    // cp. GPT-3's shape (h = 12288, a = 96), s = 131072, b = 1, t = 8, cp = 8, flash attention,
    // which also keeps the fp32 log-sum-exp of each of its a/t heads' s/cp query rows:
    // 34 x s x h / (t x cp) + 4 x a/t x s/cp bytes.
    workload::Workload w;
    w.name = "gpt3";
    w.shape = test::gpt3_shape();
    w.parameters = workload::parameter_count(*w.shape);
    const double s = 131072.0;
    const double h = 12288.0;
    const auto p = resolved(w, "tp=8,cp=8,sp=on,flash=on,seq=131072", 64);
    const double expected = 34.0 * s * h / 64.0 + 4.0 * 96.0 / 8.0 * s / 8.0;
    CHECK(cost::layer_activation_bytes(*w.shape, p).value() == doctest::Approx(expected));
    // = 34 x 131072 x 12288 / 64 B = 0.80 GiB per layer (plus 0.75 MiB of statistics), where
    // the same layer without cp would keep 6.4 GiB.
    // The whole of one GPU at pp = 1: 96 layers of one micro-batch, plus the fp32 logits of its
    // s/cp tokens over V/t vocabulary columns, 4 x (s/cp) x 51200/8 (Korthikanti section 4.3).
    CHECK(cost::activation_bytes(*w.shape, p).value() ==
          doctest::Approx(96.0 * expected + 4.0 * s / 8.0 * 51200.0 / 8.0));
  }

  TEST_CASE("attention on s/cp queries against all s keys: 1/cp of the causal FLOPs, as cp ring steps") {
    const auto w = workload::load_workload(kSource / "workloads/llama3-70b.json");
    const auto p = resolved(w, "tp=8,cp=4,flash=on,seq=32768", 32);
    const auto ops = cost::layer_operators(*w.shape, cost::operator_context(p));
    // Causal attention, FlashAttention's forward: 0.5 x 4 x s^2 x d x heads; heads 64/8 = 8 per
    // tensor rank, d = 128, s = 32768; each cp rank a quarter.
    const double flops = 0.5 * 4.0 * 32768.0 * 32768.0 * 128.0 * 8.0 / 4.0;
    bool found = false;
    for (const auto& op : ops) {
      if (op.kind == cost::OpKind::kFusedAttention && op.pass == cost::OpPass::kForward) {
        found = true;
        CHECK(op.flops.value() == doctest::Approx(flops));
        CHECK(op.kernels == 4.0);    // one per ring step
        CHECK(op.gemm.m == 8192.0);  // s/cp queries
        CHECK(op.gemm.n == 8192.0);  // against one rank's chunk of keys per step
      }
    }
    CHECK(found);
  }

  TEST_CASE("predict prices the CP exchange on the collective model and shows it in --explain") {
    const auto topo = topology::load_topology(kSource / "topologies/dgx-h100.json", 4);
    const auto w = workload::load_workload(kSource / "workloads/llama3-70b.json");
    const auto p = resolved(w, "tp=8,cp=4,flash=on,seq=32768,sp=on,fsdp=full", 32);
    const auto pred = graph::predict_step(w, p, topo);
    int ring_terms = 0;
    for (const auto& t : pred.communication) {
      if (t.role != "context") continue;
      ++ring_terms;
      CHECK(t.exposed.value() <= t.time.value() + 1e-12);
      if (t.name == "CP ring K/V send/recv (forward)") {
        // 3 steps per layer x 80 layers x 1 micro-batch (gbs = dp x mbs x pp = 1).
        CHECK(t.calls.count() == 3 * 80);
        CHECK(t.size.value() == doctest::Approx(4.0 * kMiB));
      }
    }
    CHECK(ring_terms == 3);
    bool explained = false;
    for (const auto& row : pred.explanation) explained = explained || row.label.find("CP exchange: CP ring") == 0;
    CHECK(explained);
    // The gradient and parameter collectives run over dp x cp = 4 ranks (all hold the same weights).
    for (const auto& t : pred.communication) {
      if (t.role == "shard group") CHECK(t.ranks == 4);
    }
  }

  TEST_CASE(
      "Llama 3.1 405B, 126 layers on 16 stages (7, 8 x 14, 7): the 8-layer stages set the pace, 128/126 of an even "
      "split") {
    const auto topo = topology::load_topology(kSource / "topologies/dgx-h100.json", 16);
    const auto w = workload::load_workload(kSource / "workloads/llama3-405b.json");
    REQUIRE(w.shape->layers == 126);
    const auto p = resolved(w, "tp=8,pp=16,pp-embedding-loss-layers=on,sp=on,flash=on,gbs=16", 128);
    // With one achieved fraction the compute of the model is spread evenly: per micro-batch an
    // even stage would take T/m with T = hardware FLOPs / GPUs / (peak x f), and a stage of k
    // layers k / (126/16) of that. The slowest holds 8 layers: compute = T x 8 x 16 / 126.
    graph::StepOptions options;
    options.achieved_fraction = 0.5;
    const auto pred = graph::predict_step(w, p, topo, options);
    const double even = pred.compute_detail.flops.hardware.value() / 128.0 / (989.4e12 * 0.5);
    CHECK(pred.compute.value() == doctest::Approx(even * 128.0 / 126.0));
    REQUIRE(pred.compute_detail.stages.size() == 16);
    const auto& st = pred.compute_detail.stages;
    CHECK(st[0].layers == 7.0);
    CHECK(st[1].layers == 8.0);
    CHECK(st[15].layers == 7.0);
    // Stage times in proportion to their layers: 7/8 of the middle stages' on the ends.
    CHECK((st[0].forward + st[0].backward).value() ==
          doctest::Approx((st[1].forward + st[1].backward).value() * 7.0 / 8.0));
    // Memory per stage, 1F1B with m = 16: stage k holds min(16 - k, 16) micro-batches; stage 0
    // 7 layers x 16 = 112 layer-activations, stage 1 8 x 15 = 120, stage 2 8 x 14 = 112: stage 1
    // holds the most (and a model state of 8/7.875 of the even split).
    const Bytes layer = cost::layer_activation_bytes(*w.shape, p);
    CHECK(pred.memory.activations.value() == doctest::Approx(120.0 * layer.value()));
    const auto even_state = cost::model_state(w, p);
    CHECK(pred.memory.parameters.value() == doctest::Approx(even_state.parameters.value() * 8.0 / (126.0 / 16.0)));
  }
}

}  // namespace long_context_test
