// MoE costs: DeepSeek-V3's FLOPs per token derived by hand (latent attention, routed and shared
// experts, MTP), a two-GPU ep=2 step whose dispatch and combine bytes, calls and times follow
// from the formula, experts sharded by ep in memory, and what the load factor and moe-overlap do.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/compute.hpp"
#include "stepcast/cost/memory.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/layer_map.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace moe_cost_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

workload::Workload tiny() { return workload::load_workload(kSource / "tests/cost/data/moe-2gpu.json"); }

graph::StepPrediction predict(const workload::Workload& w, const std::string& plan_text,
                              const topology::Topology& topo) {
  const auto p = plan::resolve(plan::parse_plan(plan_text), w, topo.gpu_count());
  plan::validate(p, w, topo.gpu_count());
  return graph::predict_step(w, p, topo);
}

const graph::CommTerm* find_term(const graph::StepPrediction& p, const std::string& prefix) {
  for (const auto& t : p.communication) {
    if (t.name.starts_with(prefix)) return &t;
  }
  return nullptr;
}

/// The MoE all-to-alls of a prediction: the forward dispatch and combine, the backward dispatch
/// (a test failure when one is missing).
struct DispatchTerms {
  const graph::CommTerm& dispatch;
  const graph::CommTerm& combine;
  const graph::CommTerm& backward;
};

DispatchTerms dispatch_terms(const graph::StepPrediction& p) {
  const graph::CommTerm* fwd = find_term(p, "MoE dispatch all-to-all (forward");
  const graph::CommTerm* combine = find_term(p, "MoE combine all-to-all (forward");
  const graph::CommTerm* bwd = find_term(p, "MoE dispatch all-to-all (backward");
  REQUIRE(fwd != nullptr);
  REQUIRE(combine != nullptr);
  REQUIRE(bwd != nullptr);
  return {*fwd, *combine, *bwd};
}

}  // namespace

TEST_SUITE("graph.moe") {
  TEST_CASE("DeepSeek-V3 model FLOPs per token derived by hand: 291.85 GFLOP at 4K tokens") {
    // Per token and block, 2 FLOPs per matmul parameter plus the attention scores.
    // MLA matmul parameters (no norms): q_a 11,010,048 + q_b 37,748,736 + kv_a 4,128,768 +
    //   kv_b 16,777,216 + o 117,440,512 = 187,105,280.
    // Scores: 2 x s x 128 heads x (192 qk + 128 v) = 81,920 s = 335,544,320 at s = 4096.
    // Dense MLP 3 x 7168 x 18432 = 396,361,728. MoE: router 256 x 7168 = 1,835,008 plus 9 experts
    //   (8 routed + 1 shared) x 3 x 7168 x 2048 = 396,361,728: 398,196,736.
    // Dense block: 2 x 583,467,008 + 335,544,320 = 1,502,478,336 (x3 = 4,507,435,008).
    // MoE block:   2 x 585,302,016 + 335,544,320 = 1,506,148,352 (x58 = 87,356,604,416).
    // MTP module: an MoE block + the 2h x h projection (102,760,448 parameters):
    //   2 x 688,062,464 + 335,544,320 = 1,711,669,248.
    // Output head 2 x 7168 x 129,280 = 1,853,358,080, run by the model and by the MTP module.
    // Forward per token 97,282,424,832; x 3 passes = 291,847,274,496.
    const auto w = workload::load_workload(kSource / "workloads/deepseek-v3.json");
    plan::Plan p;
    p.dp = 1;
    p.seq_len = 4096;
    p.global_batch = 1;
    const cost::StepFlops f = cost::step_flops(*w.shape, p);
    CHECK(f.model.value() == doctest::Approx(4096.0 * 291847274496.0).epsilon(1e-12));
    CHECK(f.hardware.value() == doctest::Approx(f.model.value()).epsilon(1e-12));  // no recompute
  }

  TEST_CASE(
      "two GPUs, ep=2: dispatch and combine all-to-alls of tokens x top-k x h x 2 B, 4 forward and 4 backward calls") {
    // The seed's flat machine: each GPU alone in its node behind one 400 Gbps (50 GB/s) NIC.
    const auto topo = topology::load_topology(kSource / "topologies/flat-400gbps.json", 2);
    const auto w = tiny();
    const auto p = predict(w, "dp=2,ep=2,mbs=1,gbs=2", topo);
    // S = b s x top-k x h x 2 B = 1024 x 2 x 1024 x 2 = 4,194,304 B (4 MiB) per rank and call.
    const double size = 1024.0 * 2.0 * 1024.0 * 2.0;
    // Calls: 2 MoE blocks x 1 micro-batch, a dispatch and a combine in each pass.
    const auto [fwd, combine, bwd] = dispatch_terms(p);
    CHECK(fwd.size.value() == doctest::Approx(size));
    CHECK(combine.size.value() == doctest::Approx(size));
    CHECK(fwd.calls.count() == 2);
    CHECK(combine.calls.count() == 2);
    CHECK(bwd.calls.count() == 2);
    CHECK(fwd.ranks == 2);
    CHECK(fwd.name.find("2 ranks over 2 nodes, 1 per node") != std::string::npos);
    // Each rank keeps its own half and sends S/2 = 2,097,152 B to the other node. NCCL gives a
    // network peer max(1 NIC, ceil(50 GB/s / 14 GB/s per channel)) = 4 p2p channels (paths.cc,
    // NCCL_P2P_PER_CHANNEL_NET_BW; the communicator's 4 channels hold them, one batch of peers):
    // 56 GB/s, capped at the NIC's 50. 2,097,152 / 50e9 = 41.94 us of bandwidth per call, plus
    // NCCL's per-call latency and the step's collective overhead.
    const double per_call = size / 2.0 / 50e9;
    const cost::CollectiveGroup group = cost::collective_group(topo, topo.tiers(2, 1));
    const cost::CollectivePrice price =
        cost::price_collective(group, cost::CollectiveOp::kAllToAll, Bytes(size), cost::CollectiveModel{});
    CHECK(price.bandwidth_time.value() == doctest::Approx(per_call).epsilon(1e-9));
    const double overhead = p.compute_detail.params.collective_overhead.value();
    CHECK(fwd.time.value() == doctest::Approx(2.0 * (price.latency.value() + per_call + overhead)).epsilon(1e-9));
    CHECK(bwd.time.value() == doctest::Approx(fwd.time.value()));
    // Without moe-overlap they sit between the router and the experts: all exposed.
    CHECK(fwd.exposed.value() == doctest::Approx(fwd.time.value()));
    CHECK(bwd.exposed.value() == doctest::Approx(bwd.time.value()));
  }

  TEST_CASE("recompute-modules=moe runs each block's dispatch and combine again before its backward") {
    // The MoE layer checkpointed whole (MoELayer's moe_layer_recompute) repeats its forward, the
    // all-to-alls with it: 2 MoE blocks x 1 micro-batch x (forward + recompute) = 4 calls of each;
    // the backward's gradients stay 2.
    const auto topo = topology::load_topology(kSource / "topologies/flat-400gbps.json", 2);
    const auto w = tiny();
    const auto p = predict(w, "dp=2,ep=2,mbs=1,gbs=2,recompute=selective,recompute-modules=core_attn+moe", topo);
    const DispatchTerms terms = dispatch_terms(p);
    CHECK(terms.dispatch.calls.count() == 4);
    CHECK(terms.combine.calls.count() == 4);
    CHECK(terms.backward.calls.count() == 2);
  }

  TEST_CASE("ep=2 holds half the routed experts per GPU: 99,103,744 of 124,269,568 parameters") {
    // Per block: attention 4 x 1024^2 = 4,194,304; router 4 x 1024 = 4,096; norms 2,048; experts
    // 4 x 3 x 1024 x 2048 = 25,165,824. Two blocks 58,732,544; embeddings 2 x 32000 x 1024 =
    // 65,536,000; final norm 1,024: 124,269,568. Routed 50,331,648; dense 73,937,920.
    // One GPU under ep=2: 73,937,920 + 50,331,648 / 2 = 99,103,744 parameters, 2 B each.
    const auto w = tiny();
    CHECK(w.parameters == doctest::Approx(124269568.0).epsilon(1e-12));
    const auto p = plan::resolve(plan::parse_plan("dp=2,ep=2,gbs=2"), w, 2);
    CHECK(cost::model_state(w, p).parameters.value() == doctest::Approx(2.0 * 99103744.0).epsilon(1e-12));
    const auto whole = plan::resolve(plan::parse_plan("dp=2,gbs=2"), w, 2);
    CHECK(cost::model_state(w, whole).parameters.value() == doctest::Approx(2.0 * 124269568.0).epsilon(1e-12));
  }

  TEST_CASE("a load factor stretches the all-to-alls and the expert GEMMs, a capacity factor caps it") {
    const auto topo = topology::load_topology(kSource / "topologies/flat-400gbps.json", 2);
    const auto w = tiny();
    const auto balanced = predict(w, "dp=2,ep=2,gbs=2", topo);
    const auto skewed = predict(w, "dp=2,ep=2,gbs=2,moe-imbalance=1.5", topo);
    const auto capped = predict(w, "dp=2,ep=2,gbs=2,moe-imbalance=1.5,capacity-factor=1.25", topo);
    const auto size = [](const graph::StepPrediction& p) {
      return find_term(p, "MoE dispatch all-to-all (forward")->size.value();
    };
    CHECK(size(skewed) == doctest::Approx(1.5 * size(balanced)));
    CHECK(size(capped) == doctest::Approx(1.25 * size(balanced)));
    CHECK(skewed.compute.value() > balanced.compute.value());
    CHECK(capped.compute.value() < skewed.compute.value());
  }

  TEST_CASE("moe-overlap hides the all-to-alls behind the other micro-batch's compute, never adding time") {
    const auto topo = topology::load_topology(kSource / "topologies/flat-400gbps.json", 2);
    const auto w = tiny();
    const auto plain = predict(w, "dp=2,ep=2,gbs=8", topo);
    const auto overlapped = predict(w, "dp=2,ep=2,gbs=8,moe-overlap=on", topo);
    const auto* a = find_term(plain, "MoE dispatch all-to-all (forward");
    const auto* b = find_term(overlapped, "MoE dispatch all-to-all (forward");
    CHECK(b->time.value() == doctest::Approx(a->time.value()));
    CHECK(b->exposed.value() < a->exposed.value());
    CHECK(overlapped.step_time.value() <= plain.step_time.value());
    // Four micro-batches (gbs 8 over dp 2, mbs 1) without a pipeline: Megatron-Core runs the first
    // forward and the last backward alone ("no a2a overlapping", combined_1f1b.py), so a quarter
    // of each pass's calls stays exposed; the other three pairs hide theirs behind the compute,
    // which here outlasts them.
    CHECK(b->exposed.value() == doctest::Approx(b->time.value() / 4.0));
  }

  TEST_CASE("a dense workload's predictions do not change with the MoE code: one kind of block, all layers") {
    const auto w = workload::load_workload(kSource / "workloads/llama2-7b.json");
    const auto kinds = cost::layer_kinds(*w.shape, 8, 8);  // stage 1 of 32 layers over 4 stages
    REQUIRE(kinds.size() == 1);
    CHECK_FALSE(kinds.front().first.moe);
    CHECK(kinds.front().second == 8);
  }

  TEST_CASE("DeepSeek-V3's three dense blocks sit on the first pipeline stage, as Megatron places layers") {
    const auto w = workload::load_workload(kSource / "workloads/deepseek-v3.json");
    // 61 layers over 4 stages: [0,15), [15,30), [30,45), [45,61).
    const auto first = cost::layer_kinds(*w.shape, 0, 15);
    REQUIRE(first.size() == 2);
    CHECK(first[0].second == 3);   // dense
    CHECK(first[1].second == 12);  // MoE
    CHECK(cost::layer_kinds(*w.shape, 45, 16).front().second == 16);
    // Interleaved, pp=4 and vp=2 with the layout Megatron-Bridge gives DeepSeek-V3 (E+8 | 8 x 6 |
    // 5+mtp+L over the eight virtual stages): stage 0 holds layers [0,8) and [32,40), so its three
    // dense blocks and 13 MoE blocks; stage 3 holds [24,32) and [56,61), 13 MoE blocks.
    const auto p = plan::parse_plan("pp=4,vp=2,schedule=interleaved,pp-layout=Et*8|(t*8|)*6t*5mL");
    const plan::LayerMap map = plan::layer_map(p, 61, 1);
    const auto stage0 = cost::stage_layer_kinds(*w.shape, map, 0);
    REQUIRE(stage0.size() == 2);
    CHECK(stage0[0].second == 3);
    CHECK(stage0[1].second == 13);
    CHECK(cost::stage_layer_kinds(*w.shape, map, 3).front().second == 13);
  }
}

}  // namespace moe_cost_test
