// MoE blocks in the simulator: a two-GPU ep=2 step whose dispatch and combine all-to-alls are
// derived by hand (bytes from tokens x top-k x h x 2 B, time from NCCL's p2p channels), the
// layer's compute waiting for them, or hiding them under moe-overlap=on; the step graph of a
// plan takes the prediction's MoE calls and the folding of expert groups.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/step.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/sim/step_from_plan.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/predict_plan.hpp"

using namespace stepcast;

namespace {

const std::string kRoot = STEPCAST_SOURCE_DIR;

// The seed's flat machine: each GPU alone in its node behind one 400 Gbps (50 GB/s) NIC.
topology::Topology two_gpus() { return topology::load_topology(kRoot + "/topologies/flat-400gbps.json", 2); }

// tests/cost/data/moe-2gpu.json: 2 MoE blocks, h = 1024, 4 experts, top-2, 1024 tokens.
// One call's S = b s x top-k x h x 2 B = 1024 x 2 x 1024 x 2 = 4,194,304 B per rank.
constexpr double kS = 1024.0 * 2.0 * 1024.0 * 2.0;

// Two layers, both MoE blocks, one micro-batch: 1 ms forward and 2 ms backward of compute, and
// per block and pass a dispatch and a combine of S on the 2-GPU expert-parallel group.
sim::StepSpec hand_spec(bool overlap) {
  sim::StepSpec s;
  s.dp = 2;
  s.layers = 2;
  s.micro_batches = 1;
  s.forward = Seconds(1e-3);
  s.backward = Seconds(2e-3);
  s.stride_pp = 1;
  s.stride_dp = 1;
  sim::ExpertParallelComm e;
  e.ep = 2;
  e.etp = 1;
  e.forward = {{cost::CollectiveOp::kAllToAll, Bytes(kS), false}, {cost::CollectiveOp::kAllToAll, Bytes(kS), false}};
  e.backward = e.forward;
  e.stage_blocks = {2.0};
  e.beside_compute = overlap;
  s.expert_parallel = e;
  return s;
}

// One all-to-all call: each rank keeps its half and sends S/2 = 2,097,152 B to the other node.
// NCCL gives a network peer 4 p2p channels of 14 GB/s (paths.cc, NCCL_P2P_PER_CHANNEL_NET_BW;
// the figure tests/cost/moe_cost_test.cpp derives): 56 GB/s, capped at the NIC's 50, so
// 2,097,152 / 50e9 = 41.94 us, plus NCCL's per-call latency from the collective model.
double a2a_seconds(const topology::Topology& topo) {
  const cost::CollectiveGroup group = cost::collective_group(topo, topo.tiers(2, 1));
  const cost::CollectivePrice price =
      cost::price_collective(group, cost::CollectiveOp::kAllToAll, Bytes(kS), cost::CollectiveModel{});
  const double bandwidth = kS / 2.0 / 50e9;
  CHECK(price.bandwidth_time.value() == doctest::Approx(bandwidth).epsilon(1e-9));
  return price.latency.value() + bandwidth;
}

}  // namespace

TEST_SUITE("sim.moe") {
  TEST_CASE("two GPUs, ep=2: 2 blocks x (dispatch + combine) per pass, 8 all-to-alls of 4 MiB on the compute stream") {
    const topology::Topology topo = two_gpus();
    const double a2a = a2a_seconds(topo);
    const sim::StepResult r = sim::simulate_step(topo, hand_spec(false));
    // Forward: 2 blocks x 2 calls; backward the same. They sit between dependent kernels, so the
    // step is the compute plus all 8 calls: 3 ms + 8 x (latency + 41.94 us).
    CHECK(r.breakdown.moe_comm.value() == doctest::Approx(8.0 * a2a).epsilon(1e-6));
    CHECK(r.step_time.value() == doctest::Approx(3e-3 + 8.0 * a2a).epsilon(1e-6));
    CHECK(r.breakdown.compute.value() == doctest::Approx(3e-3).epsilon(1e-9));
    CHECK(r.breakdown.bubble.value() == doctest::Approx(0.0).epsilon(1e-9));
  }

  TEST_CASE("moe-overlap: the calls run beside each layer's compute, which is longer here, so nothing shows") {
    const topology::Topology topo = two_gpus();
    const double a2a = a2a_seconds(topo);
    // Per layer: 0.5 ms forward and 1 ms backward of compute against 2 calls (about 0.1 ms).
    REQUIRE(2.0 * a2a < 0.5e-3);
    const sim::StepResult r = sim::simulate_step(topo, hand_spec(true));
    CHECK(r.breakdown.moe_comm.value() == doctest::Approx(0.0));
    CHECK(r.step_time.value() == doctest::Approx(3e-3).epsilon(1e-9));
  }

  TEST_CASE("moe-overlap: what outlasts a layer's compute shows, as in predict") {
    const topology::Topology topo = two_gpus();
    const double a2a = a2a_seconds(topo);
    sim::StepSpec s = hand_spec(true);
    s.forward = Seconds(2.0 * a2a);  // per layer a2a: half the forward's two calls
    s.backward = Seconds(2.0 * a2a);
    const sim::StepResult r = sim::simulate_step(topo, s);
    // Each of the 4 layer passes: 2 calls (2 a2a) beside a2a of compute: a2a exposed each.
    CHECK(r.breakdown.moe_comm.value() == doctest::Approx(4.0 * a2a).epsilon(1e-6));
    CHECK(r.step_time.value() == doctest::Approx(8.0 * a2a).epsilon(1e-6));
  }

  TEST_CASE(
      "a plan's step graph takes the prediction's calls: bytes stretched by the load factor, recompute runs the "
      "forward's again") {
    const topology::Topology topo = two_gpus();
    const auto w = workload::load_workload(kRoot + "/tests/cost/data/moe-2gpu.json");
    plan::Plan p;
    const cost::StepPrediction balanced = test::predict_plan(w, "dp=2,ep=2,mbs=1,gbs=2", topo, p);
    const sim::StepSpec s = sim::plan_step(p, balanced).spec;
    REQUIRE(s.expert_parallel.has_value());
    REQUIRE(s.expert_parallel->forward.size() == 2);
    CHECK(s.expert_parallel->forward[0].op == cost::CollectiveOp::kAllToAll);
    CHECK(s.expert_parallel->forward[0].size.value() == doctest::Approx(kS));
    CHECK(s.expert_parallel->backward.size() == 2);
    CHECK(s.expert_parallel->stage_blocks == std::vector<double>{2.0});
    const cost::StepPrediction skewed =
        test::predict_plan(w, "dp=2,ep=2,mbs=1,gbs=2,moe-imbalance=1.5,recompute=full", topo, p);
    const sim::StepSpec t = sim::plan_step(p, skewed).spec;
    REQUIRE(t.expert_parallel.has_value());
    CHECK(t.expert_parallel->forward[1].size.value() == doctest::Approx(1.5 * kS));
    CHECK(t.expert_parallel->backward.size() == 4);  // the forward's dispatch and combine again, then their gradients
  }

  TEST_CASE("predict and simulate agree on the two-GPU ep=2 plan, with and without overlap") {
    const topology::Topology topo = two_gpus();
    const auto w = workload::load_workload(kRoot + "/tests/cost/data/moe-2gpu.json");
    for (const std::string text : {"dp=2,ep=2,mbs=1,gbs=8", "dp=2,ep=2,mbs=1,gbs=8,moe-overlap=on"}) {
      CAPTURE(text);
      plan::Plan p;
      const cost::StepPrediction predicted = test::predict_plan(w, text, topo, p);
      const sim::StepResult simulated = sim::simulate_step(topo, sim::plan_step(p, predicted).spec);
      CHECK(simulated.step_time.value() == doctest::Approx(predicted.step_time.value()).epsilon(0.10));
    }
  }

  TEST_CASE("moe-overlap with full recompute: both engines hide the recomputed forward's calls behind the backward") {
    // Qwen3-30B-A3B on two DGX H100 nodes, ep=8 over 4 GPUs of each node: the all-to-alls cross
    // the NICs and outlast the forward's compute, not the backward's.
    const topology::Topology topo = topology::load_topology(kRoot + "/topologies/dgx-h100.json", 2);
    const auto w = workload::load_workload(kRoot + "/workloads/qwen3-30b-a3b.json");
    plan::Plan p;
    const cost::StepPrediction predicted =
        test::predict_plan(w, "dp=8,pp=2,ep=8,moe-overlap=on,recompute=full,flash=on,gbs=64", topo, p);
    const sim::StepResult simulated = sim::simulate_step(topo, sim::plan_step(p, predicted).spec);
    CHECK(simulated.step_time.value() == doctest::Approx(predicted.step_time.value()).epsilon(0.10));
  }

  TEST_CASE("expert groups fold the stage's GPUs etp first, then ep (Megatron-core's parallel folding)") {
    // Two DGX H100 nodes as dp=16 dense; experts etp=1 x ep=8 x edp=2: expert-parallel groups
    // {0..7} and {8..15}, each inside a node (NVLink only), their expert data-parallel groups
    // {0,8}, {1,9}, ... across the nodes (NICs).
    const topology::Topology topo = topology::load_topology(kRoot + "/topologies/dgx-h100.json", 2);
    sim::StepSpec s;
    s.dp = 16;
    s.layers = 1;
    s.forward = Seconds(1e-3);
    s.backward = Seconds(2e-3);
    s.stride_pp = 1;
    s.stride_dp = 1;
    sim::ExpertParallelComm e;
    e.ep = 8;
    e.etp = 1;
    e.forward = {{cost::CollectiveOp::kAllToAll, Bytes(kS), false}};
    e.stage_blocks = {1.0};
    s.expert_parallel = e;
    const sim::StepResult alone = sim::simulate_step(topo, s, {}, true);
    CHECK(alone.breakdown.moe_comm.value() > 0.0);
    CHECK(alone.tier_utilization[0] > 0.0);   // intra-node
    CHECK(alone.tier_utilization[1] == 0.0);  // no byte through a NIC
    bool traced = false;
    for (const auto& span : alone.spans) traced = traced || span.name == "MoE dispatch/combine";
    CHECK(traced);
    s.syncs.push_back(
        sim::GradientSync{"expert gradients", cost::CollectiveOp::kAllReduce, Bytes(1 << 20), 1.0, false, true, true});
    const sim::StepResult reduced = sim::simulate_step(topo, s);
    CHECK(reduced.tier_utilization[1] > 0.0);
    CHECK(reduced.breakdown.dp_exposed.value() > 0.0);
  }
}
