// The context-parallel exchange in the simulator: played as flows layer by layer, it blocks the
// attention under all-to-all (Ulysses) and hides behind the compute under the ring.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace context_parallel_sim_test {

using namespace stepcast;

namespace {

struct Run {
  graph::StepPrediction predicted;
  graph::StepGraph graph;
  sim::StepResult simulated;
};

// The context-parallel nodes of a pass: calls per layer, and whether they run beside the attention.
struct PassCalls {
  int calls = 0;
  bool beside = false;
};
PassCalls pass_calls(const graph::StepGraph& g, bool backward) {
  PassCalls out;
  for (const graph::CommNode& n : g.comm) {
    if (n.anchor != graph::Anchor::kLayerStart || g.groups[n.group].role != "context") continue;
    const bool in_backward = n.pass != graph::Pass::kForward;
    const bool in_forward = n.pass != graph::Pass::kBackward;
    if (backward ? in_backward : in_forward) out.calls += n.layer_calls;
    out.beside = n.join != graph::Join::kBeforeCompute;
  }
  return out;
}

// Llama-3 8B (workloads/llama3-8b.json: 32 layers, 32 heads, 8 key/value heads) on one DGX H100
// node, every GPU a context-parallel rank.
Run run(const std::string& plan_text) {
  const std::string root = STEPCAST_SOURCE_DIR;
  const workload::Workload w = workload::load_workload(root + "/workloads/llama3-8b.json");
  const topology::Topology t = topology::load_topology(root + "/topologies/dgx-h100.json", 1);
  plan::Plan p = plan::resolve(plan::parse_plan(plan_text), w, t.gpu_count());
  plan::validate(p, w, t.gpu_count());
  graph::StepOptions options;
  options.explain = false;
  Run r;
  r.graph = graph::plan_step_graph(w, p, t, options);
  r.predicted = graph::evaluate_step(r.graph, w, p, t, options);
  r.simulated = sim::simulate_step(t, r.graph);
  return r;
}

}  // namespace

TEST_SUITE("sim.context_parallel") {
  TEST_CASE(
      "a2a: each layer pass's all-to-alls run before its attention, alone on NVLink they take the analytical time") {
    const Run r = run("cp=8,cp-comm=a2a,flash=on,seq=32768");
    // Forward: Q,K,V then O; backward: dO then dQ,dK,dV (Jacobs et al. 2023, section 3).
    CHECK(pass_calls(r.graph, false).calls == 2);
    CHECK(pass_calls(r.graph, true).calls == 2);
    CHECK_FALSE(pass_calls(r.graph, false).beside);
    CHECK(r.graph.layout.replicas == 8);  // gradients reduced over dp x cp = 1 x 8
    Seconds analytical(0.0);
    for (const auto& t : r.predicted.communication) {
      if (t.role == "context") analytical += t.exposed;
    }
    REQUIRE(analytical.value() > 0.0);
    // Contention-free flows: the simulator's wait equals the model's blocking time.
    CHECK(r.simulated.breakdown.wait("context").value() == doctest::Approx(analytical.value()).epsilon(0.05));
  }

  TEST_CASE("p2p ring: cp-1 sends of K/V per layer forward beside the compute, which hides them here") {
    const Run r = run("cp=8,flash=on,seq=32768");
    CHECK(pass_calls(r.graph, false).calls == 7);
    CHECK(pass_calls(r.graph, true).calls == 8);  // 7 with dK/dV, and dK/dV home
    CHECK(pass_calls(r.graph, false).beside);
    // Exposed at most as the model's whole exchange time, never negative.
    Seconds total(0.0);
    for (const auto& t : r.predicted.communication) {
      if (t.role == "context") total += t.time;
    }
    CHECK(r.simulated.breakdown.wait("context").value() >= 0.0);
    CHECK(r.simulated.breakdown.wait("context").value() <= total.value());
    CHECK(r.simulated.step_time.value() > r.simulated.breakdown.compute.value());
  }
}

}  // namespace context_parallel_sim_test
