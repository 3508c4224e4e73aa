// MoE blocks in the simulator: a two-GPU ep=2 step whose dispatch and combine all-to-alls are
// derived by hand (bytes from tokens x top-k x h x 2 B, time from NCCL's p2p channels), the
// layer's compute waiting for them, or hiding them under moe-overlap=on; the step graph of a
// plan takes the prediction's MoE calls and the folding of expert groups.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "hand_graph.hpp"
#include "stepcast/cost/collective_model.hpp"
#include "stepcast/cost/pipeline.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/sim/pipeline_order.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/predict_plan.hpp"

namespace moe_sim_test {

using namespace stepcast;

namespace {

const std::string kRoot = STEPCAST_SOURCE_DIR;

// The seed's flat machine: each GPU alone in its node behind one 400 Gbps (50 GB/s) NIC.
topology::Topology two_gpus() { return topology::load_topology(kRoot + "/topologies/flat-400gbps.json", 2); }

// tests/cost/data/moe-2gpu.json: 2 MoE blocks, h = 1024, 4 experts, top-2, 1024 tokens.
// One call's S = b s x top-k x h x 2 B = 1024 x 2 x 1024 x 2 = 4,194,304 B per rank.
constexpr double kS = 1024.0 * 2.0 * 1024.0 * 2.0;

// Two layers, both MoE blocks, `m` micro-batches: 1 ms forward and 2 ms backward of compute each,
// and per block and pass a dispatch and a combine of S on the 2-GPU expert-parallel group.
graph::StepGraph hand_graph(bool overlap, Seconds forward = Seconds(1e-3), Seconds backward = Seconds(2e-3),
                            int m = 1) {
  graph::StepGraph g = sim::test::hand_step(1, m, plan::Schedule::k1F1B, 1, forward, backward, 2, 1, 2);
  const std::size_t ep = sim::test::replica_group(g, "expert parallel", 2);
  for (const graph::Pass pass : {graph::Pass::kForward, graph::Pass::kBackward}) {
    for (const char* name : {"MoE dispatch all-to-all", "MoE combine all-to-all"}) {
      graph::CommNode n =
          sim::test::hand_node(name, ep, cost::CollectiveOp::kAllToAll, Bytes(kS), graph::Anchor::kLayerStart);
      n.pass = pass;
      n.join = overlap ? graph::Join::kLayerEnd : graph::Join::kBeforeCompute;
      g.comm.push_back(n);
    }
  }
  return g;
}

graph::StepGraph plan_graph(const workload::Workload& w, const std::string& text, const topology::Topology& topo,
                            plan::Plan& p) {
  test::predict_plan(w, text, topo, p);
  return test::plan_graph(w, p, topo);
}

// A plan's layer-start nodes on the expert groups, in order.
std::vector<const graph::CommNode*> expert_nodes(const graph::StepGraph& g) {
  std::vector<const graph::CommNode*> out;
  for (const graph::CommNode& n : g.comm) {
    if (n.anchor == graph::Anchor::kLayerStart && g.groups[n.group].role == "expert parallel") out.push_back(&n);
  }
  return out;
}

// One all-to-all call: each rank keeps its half and sends S/2 = 2,097,152 B to the other node.
// NCCL gives a network peer 4 p2p channels of 14 GB/s (paths.cc, NCCL_P2P_PER_CHANNEL_NET_BW;
// the figure tests/cost/moe_cost_test.cpp derives): 56 GB/s, capped at the NIC's 50, so
// 2,097,152 / 50e9 = 41.94 us, plus NCCL's per-call latency from the collective model.
/// The share of the GPU's SMs an all-to-all of the two GPUs holds: the NCCL kernel's thread blocks,
/// one per channel of the communicator, over the GPU's SM count.
double a2a_sm_share(const topology::Topology& topo) {
  const cost::CollectiveGroup group = cost::collective_group(topo, topo.tiers(2, 1));
  const cost::CollectivePrice price =
      cost::price_collective(group, cost::CollectiveOp::kAllToAll, Bytes(kS), cost::CollectiveModel{});
  REQUIRE(group.nccl.has_value());
  CHECK(price.blocks == group.nccl->comm_channels);
  return static_cast<double>(price.blocks) / topo.gpu().sm_count;
}

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
    const sim::StepResult r = sim::simulate_step(topo, hand_graph(false));
    // Forward: 2 blocks x 2 calls; backward the same. They sit between dependent kernels, so the
    // step is the compute plus all 8 calls: 3 ms + 8 x (latency + 41.94 us).
    CHECK(r.breakdown.wait("expert parallel").value() == doctest::Approx(8.0 * a2a).epsilon(1e-6));
    CHECK(r.step_time.value() == doctest::Approx(3e-3 + 8.0 * a2a).epsilon(1e-6));
    CHECK(r.breakdown.compute.value() == doctest::Approx(3e-3).epsilon(1e-9));
    CHECK(r.breakdown.bubble.value() == doctest::Approx(0.0).epsilon(1e-9));
  }

  TEST_CASE(
      "moe-overlap: paired passes run the calls beside each layer's compute, which is longer here, so nothing shows "
      "but the SMs they hold, and the first forward and the last backward run theirs first") {
    const topology::Topology topo = two_gpus();
    const double a2a = a2a_seconds(topo);
    const double f = a2a_sm_share(topo);
    // Three micro-batches, F0 B0 F1 B1 F2 B2: Megatron-Core runs F0 and B2 alone ("no a2a
    // overlapping", combined_1f1b.py), their 2 layers x 2 calls each before the compute: 8 calls
    // exposed. The other four passes pair up; per layer 0.5 ms forward and 1 ms backward of compute
    // against 2 calls (about 0.1 ms), and while the calls run the compute has 1 - f of the SMs:
    // each of their 16 calls costs it a2a x f. Compute: 3 x 3 ms.
    REQUIRE(2.0 * a2a < 0.5e-3);
    const sim::StepResult r = sim::simulate_step(topo, hand_graph(true, Seconds(1e-3), Seconds(2e-3), 3));
    CHECK(r.breakdown.wait("expert parallel").value() == doctest::Approx(8.0 * a2a).epsilon(1e-6));
    CHECK(r.step_time.value() == doctest::Approx(9e-3 + 8.0 * a2a + 16.0 * a2a * f).epsilon(1e-6));
    CHECK(r.breakdown.compute.value() == doctest::Approx(9e-3 + 16.0 * a2a * f).epsilon(1e-6));
    // One micro-batch has no pass to pair with: every call shows, as without the overlap.
    const sim::StepResult one = sim::simulate_step(topo, hand_graph(true));
    CHECK(one.breakdown.wait("expert parallel").value() == doctest::Approx(8.0 * a2a).epsilon(1e-6));
    CHECK(one.step_time.value() == doctest::Approx(3e-3 + 8.0 * a2a).epsilon(1e-6));
  }

  TEST_CASE("moe-overlap: what outlasts a layer's compute shows, as in predict") {
    const topology::Topology topo = two_gpus();
    const double a2a = a2a_seconds(topo);
    const double f = a2a_sm_share(topo);
    // Per layer a2a of compute: half the forward's two calls. Three micro-batches: the 4 layer
    // passes of F0 and B2 run their 2 calls (2 a2a) before their compute (a2a), 3 a2a each. The
    // 8 layer passes of the paired B0, F1, B1, F2 run 2 calls beside a2a of compute, which runs on
    // 1 - f of the SMs all along (a2a / (1 - f)); the rest of the calls, 2 a2a - a2a / (1 - f),
    // shows each. Step: 4 x 3 a2a + 8 x 2 a2a = 28 a2a.
    const sim::StepResult r = sim::simulate_step(topo, hand_graph(true, Seconds(2.0 * a2a), Seconds(2.0 * a2a), 3));
    REQUIRE(f < 0.5);
    CHECK(r.breakdown.wait("expert parallel").value() ==
          doctest::Approx(8.0 * a2a + 8.0 * (2.0 * a2a - a2a / (1.0 - f))).epsilon(1e-6));
    CHECK(r.step_time.value() == doctest::Approx(28.0 * a2a).epsilon(1e-6));
  }

  TEST_CASE(
      "a plan's step graph takes the prediction's calls: bytes stretched by the load factor, recompute runs the "
      "forward's again") {
    const topology::Topology topo = two_gpus();
    const auto w = workload::load_workload(kRoot + "/tests/cost/data/moe-2gpu.json");
    plan::Plan p;
    const graph::StepGraph balanced = plan_graph(w, "dp=2,ep=2,mbs=1,gbs=2", topo, p);
    const auto calls = expert_nodes(balanced);
    REQUIRE(calls.size() == 4);  // dispatch and combine, forward and backward
    CHECK(calls[0]->op == cost::CollectiveOp::kAllToAll);
    CHECK(calls[0]->size.value() == doctest::Approx(kS));
    CHECK(calls[0]->pass == graph::Pass::kForward);
    CHECK(calls[2]->pass == graph::Pass::kBackward);
    // Both layers of the one stage hold an MoE block: one round each.
    CHECK(calls[0]->per_layer == std::vector<std::vector<int>>{{1, 1}});
    const graph::StepGraph skewed = plan_graph(w, "dp=2,ep=2,mbs=1,gbs=2,moe-imbalance=1.5,recompute=full", topo, p);
    const auto stretched = expert_nodes(skewed);
    REQUIRE(stretched.size() == 4);
    CHECK(stretched[1]->size.value() == doctest::Approx(1.5 * kS));
    // The forward's dispatch and combine run again in the backward, before their gradients.
    CHECK(stretched[0]->pass == graph::Pass::kForwardAndRecompute);
  }

  TEST_CASE("predict and simulate agree on the two-GPU ep=2 plan, with and without overlap") {
    const topology::Topology topo = two_gpus();
    const auto w = workload::load_workload(kRoot + "/tests/cost/data/moe-2gpu.json");
    for (const std::string text : {"dp=2,ep=2,mbs=1,gbs=8", "dp=2,ep=2,mbs=1,gbs=8,moe-overlap=on"}) {
      CAPTURE(text);
      plan::Plan p;
      const graph::StepPrediction predicted = test::predict_plan(w, text, topo, p);
      const sim::StepResult simulated = sim::simulate_step(topo, plan_graph(w, text, topo, p));
      CHECK(simulated.step_time.value() == doctest::Approx(predicted.step_time.value()).epsilon(0.10));
    }
  }

  TEST_CASE("moe-overlap on an interleaved pipeline across nodes: both engines hide the calls the same way") {
    // Qwen3-30B-A3B on two DGX H100 nodes, ep=8 over 4 GPUs of each node: the all-to-alls cross
    // the NICs and outlast the forward's compute, not the backward's. Megatron-Core runs its EP
    // overlap with pp > 1 on a virtual pipeline only, and without full recompute (plan.verdict).
    const topology::Topology topo = topology::load_topology(kRoot + "/topologies/dgx-h100.json", 2);
    const auto w = workload::load_workload(kRoot + "/workloads/qwen3-30b-a3b.json");
    plan::Plan p;
    const std::string text = "dp=8,pp=2,vp=2,schedule=interleaved,ep=8,moe-overlap=on,flash=on,gbs=64";
    const graph::StepPrediction predicted = test::predict_plan(w, text, topo, p);
    const sim::StepResult simulated = sim::simulate_step(topo, plan_graph(w, text, topo, p));
    CHECK(simulated.step_time.value() == doctest::Approx(predicted.step_time.value()).epsilon(0.10));
  }

  TEST_CASE("the passes moe-overlap cannot pair: the first stage's forwards before its first backward") {
    // Hand counts: no pipeline, 5 micro-batches: F0 runs before B0, 1. 1F1B on 4 stages, 8
    // micro-batches: 3 warm-up forwards and the first steady one, 4. Interleaved, pp 2, v 8, 32
    // micro-batches: Megatron's warm-up (2-1) x 2 + (8-1) x 2 = 16 chunk passes and one more, 17
    // over 8 chunks = 2.125. GPipe runs every forward first: m.
    using plan::Schedule;
    CHECK(cost::unpaired_microbatches(Schedule::k1F1B, 1, 5, 1) == 1.0);
    CHECK(cost::unpaired_microbatches(Schedule::k1F1B, 4, 8, 1) == 4.0);
    CHECK(cost::unpaired_microbatches(Schedule::kInterleaved, 2, 32, 8) == doctest::Approx(17.0 / 8.0));
    CHECK(cost::unpaired_microbatches(Schedule::kGpipe, 4, 8, 1) == 8.0);
    // And the simulator's own task orders agree, backwards after the last forward included.
    // Named fields, not a structured binding: doctest's CAPTURE is a lambda, and clang before 16
    // cannot capture a structured binding.
    struct Case {
      Schedule schedule;
      int pp, m, v;
    };
    for (const Case& c : {Case{Schedule::k1F1B, 1, 5, 1}, Case{Schedule::k1F1B, 4, 8, 1},
                          Case{Schedule::k1F1B, 4, 2, 1}, Case{Schedule::kInterleaved, 2, 32, 8},
                          Case{Schedule::kInterleaved, 4, 4, 2}, Case{Schedule::kZbH1, 3, 6, 1}}) {
      const auto [schedule, pp, m, v] = c;
      CAPTURE(c.pp);
      CAPTURE(c.m);
      CAPTURE(c.v);
      const auto ops = sim::pipeline_order(schedule, pp, 0, m, v);
      using Kind = sim::PipelineOp::Kind;
      const auto first_b =
          std::find_if(ops.begin(), ops.end(), [](const auto& o) { return o.kind == Kind::kBackward; });
      const auto last_f =
          std::find_if(ops.rbegin(), ops.rend(), [](const auto& o) { return o.kind == Kind::kForward; }).base();
      const auto forwards = std::count_if(ops.begin(), first_b, [](const auto& o) { return o.kind == Kind::kForward; });
      const auto backwards = std::count_if(last_f, ops.end(), [](const auto& o) { return o.kind == Kind::kBackward; });
      const double chunks = schedule == Schedule::kInterleaved ? v : 1;
      CHECK(static_cast<double>(forwards) / chunks == doctest::Approx(cost::unpaired_microbatches(schedule, pp, m, v)));
      CHECK(backwards == forwards);
    }
  }

  TEST_CASE("expert groups fold the stage's GPUs etp first, then ep (Megatron-core's parallel folding)") {
    // Mixtral 8x7B on two DGX H100 nodes as dp=16 dense; experts etp=1 x ep=8 x edp=2: expert-parallel groups
    // {0..7} and {8..15}, each inside a node (NVLink only), their expert data-parallel groups
    // {0,8}, {1,9}, ... across the nodes (NICs).
    const topology::Topology topo = topology::load_topology(kRoot + "/topologies/dgx-h100.json", 2);
    const auto w = workload::load_workload(kRoot + "/workloads/mixtral-8x7b.json");
    plan::Plan p;
    graph::StepGraph g = plan_graph(w, "dp=16,ep=8,mbs=1,gbs=16,seq=4096,flash=on", topo, p);
    const auto calls = expert_nodes(g);
    REQUIRE_FALSE(calls.empty());
    const graph::GroupSets ep = g.groups[calls[0]->group].members(0);
    REQUIRE(ep.size() == 2);
    CHECK(ep[0] == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(ep[1] == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});
    std::size_t expert_data = g.groups.size();
    for (std::size_t i = 0; i < g.groups.size(); ++i) {
      if (g.groups[i].role == "expert data parallel") expert_data = i;
    }
    REQUIRE(expert_data < g.groups.size());
    CHECK(g.groups[expert_data].members(0).front() == std::vector<int>{0, 8});
    // The step without its gradient reductions: the all-to-alls alone stay on NVLink.
    graph::StepGraph alone = g;
    std::erase_if(alone.comm, [](const graph::CommNode& n) { return n.anchor == graph::Anchor::kGradientReady; });
    sim::SimOptions traced;
    traced.record_trace = true;
    const sim::StepResult r = sim::simulate_step(topo, alone, traced);
    CHECK(r.breakdown.wait("expert parallel").value() > 0.0);
    CHECK(r.tier_utilization[0] > 0.0);   // intra-node
    CHECK(r.tier_utilization[1] == 0.0);  // no byte through a NIC
    bool named = false;
    for (const auto& span : r.spans) named = named || span.name.starts_with("MoE dispatch all-to-all");
    CHECK(named);
    // The experts' gradients reduce across the nodes, through the NICs.
    const sim::StepResult reduced = sim::simulate_step(topo, g);
    CHECK(reduced.tier_utilization[1] > 0.0);
  }
}

}  // namespace moe_sim_test
