// MoE plans under FSDP / ZeRO-3 in the simulator: each layer's dense unit and its MoE blocks'
// experts gathered (and reduce-scattered) on the stage's data-parallel stream over their own
// groups, and the simulated step against predict's.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"
#include "support/predict_plan.hpp"

namespace moe_fsdp_sim_test {

using namespace stepcast;

namespace {

const std::string kRoot = STEPCAST_SOURCE_DIR;

}  // namespace

TEST_SUITE("sim.moe_fsdp") {
  TEST_CASE("the step graph takes one block's expert gather and reduce-scatter beside the dense unit") {
    // Mixtral 8x7B on one DGX H100, dp=8, ep=2: a block's 4 local experts, 4 x 3 x 4096 x 14336
    // = 704,643,072 params, 1,409,286,144 B in bf16, gathered and reduce-scattered over edp = 4.
    const topology::Topology topo = topology::load_topology(kRoot + "/topologies/dgx-h100.json", 1);
    const auto w = workload::load_workload(kRoot + "/workloads/mixtral-8x7b.json");
    plan::Plan p;
    test::predict_plan(w, "dp=8,ep=2,fsdp=full,seq=4096,flash=on,gbs=16", topo, p);
    const graph::StepGraph g = test::plan_graph(w, p, topo);
    std::vector<const graph::CommNode*> dense;
    std::vector<const graph::CommNode*> experts;
    for (const graph::CommNode& n : g.comm) {
      if (n.anchor != graph::Anchor::kLayerPrefetch && n.anchor != graph::Anchor::kLayerEnd) continue;
      (g.groups[n.group].role == "expert shard group" ? experts : dense).push_back(&n);
    }
    // Gathered before the forward and again before the backward, reduce-scattered after it.
    REQUIRE(dense.size() == 3);
    REQUIRE(experts.size() == 3);
    CHECK(dense[1]->pass == graph::Pass::kBackward);
    // The dense unit: 41,984,000 params of attention, router and norms, 83,968,000 B.
    CHECK(dense[0]->size.value() == doctest::Approx(83'968'000.0));
    CHECK(experts[0]->size.value() == doctest::Approx(1'409'286'144.0));
    CHECK(experts[2]->size.value() == doctest::Approx(1'409'286'144.0));
    CHECK(g.groups[experts[0]->group].ranks == 4);
    // Every layer holds one MoE block: one expert unit per layer.
    CHECK(g.rounds_at(*experts[0], 0, 0, 0) == 1);
    for (const graph::CommNode& n : g.comm) {
      CHECK(n.anchor != graph::Anchor::kGradientReady);  // nothing reduced after the backward beside them
    }
  }

  TEST_CASE("predict and simulate agree within 10% on MoE plans under FSDP and ZeRO-3") {
    // Two DGX H100 nodes: expert-parallel groups inside a node, expert data-parallel groups across
    // the nodes (ep=8, edp=2) or inside (ep=4 x edp=4 over pp=2's 8 GPUs of a stage).
    const topology::Topology topo = topology::load_topology(kRoot + "/topologies/dgx-h100.json", 2);
    const auto mixtral = workload::load_workload(kRoot + "/workloads/mixtral-8x7b.json");
    const auto qwen = workload::load_workload(kRoot + "/workloads/qwen3-30b-a3b.json");
    const struct {
      const workload::Workload* w;
      const char* plan;
    } cases[] = {
        {&mixtral, "dp=16,ep=8,fsdp=full,seq=4096,flash=on,gbs=32"},
        {&qwen, "dp=16,ep=4,zero=3,seq=4096,flash=on,gbs=32"},
        {&mixtral, "dp=8,pp=2,ep=4,fsdp=grad-op,seq=4096,flash=on,gbs=32,recompute=full"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.plan);
      plan::Plan p;
      const graph::StepPrediction predicted = test::predict_plan(*c.w, c.plan, topo, p);
      const sim::StepResult simulated = sim::simulate_step(topo, test::plan_graph(*c.w, p, topo));
      CHECK(simulated.step_time.value() == doctest::Approx(predicted.step_time.value()).epsilon(0.10));
    }
  }
}

}  // namespace moe_fsdp_sim_test
