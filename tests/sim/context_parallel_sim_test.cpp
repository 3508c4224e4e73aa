// The context-parallel exchange in the simulator: played as flows layer by layer, it blocks the
// attention under all-to-all (Ulysses) and hides behind the compute under the ring.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/cost/step.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/sim/step_from_plan.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

using namespace stepcast;

namespace {

struct Run {
  cost::StepPrediction predicted;
  sim::StepSpec spec;
  sim::StepResult simulated;
};

// Llama-3 8B (workloads/llama3-8b.json: 32 layers, 32 heads, 8 key/value heads) on one DGX H100
// node, every GPU a context-parallel rank.
Run run(const std::string& plan_text) {
  const std::string root = STEPCAST_SOURCE_DIR;
  const workload::Workload w = workload::load_workload(root + "/workloads/llama3-8b.json");
  const topology::Topology t = topology::load_topology(root + "/topologies/dgx-h100.json", 1);
  plan::Plan p = plan::resolve(plan::parse_plan(plan_text), w, t.gpu_count());
  plan::validate(p, w, t.gpu_count());
  cost::StepOptions options;
  options.explain = false;
  Run r;
  r.predicted = cost::predict_step(w, p, t, options);
  r.spec = sim::plan_step(p, r.predicted).spec;
  r.simulated = sim::simulate_step(t, r.spec);
  return r;
}

}  // namespace

TEST_SUITE("sim.context_parallel") {
  TEST_CASE(
      "a2a: each layer pass's all-to-alls run before its attention; alone on NVLink they take the analytical time") {
    const Run r = run("cp=8,cp-comm=a2a,flash=on,seq=32768");
    REQUIRE(r.spec.context_parallel.has_value());
    // Forward: Q,K,V then O; backward: dO then dQ,dK,dV (Jacobs et al. 2023, section 3).
    CHECK(r.spec.context_parallel->forward.size() == 2);
    CHECK(r.spec.context_parallel->backward.size() == 2);
    CHECK_FALSE(r.spec.context_parallel->beside_compute);
    CHECK(r.spec.dp == 8);  // gradients reduced over dp x cp = 1 x 8
    Seconds analytical(0.0);
    for (const auto& t : r.predicted.communication) {
      if (t.group == cost::CommGroup::kContext) analytical += t.exposed;
    }
    REQUIRE(analytical.value() > 0.0);
    // Contention-free flows: the simulator's wait equals the model's blocking time.
    CHECK(r.simulated.breakdown.cp_comm.value() == doctest::Approx(analytical.value()).epsilon(0.05));
  }

  TEST_CASE("p2p ring: cp-1 sends of K/V per layer forward beside the compute, which hides them here") {
    const Run r = run("cp=8,flash=on,seq=32768");
    REQUIRE(r.spec.context_parallel.has_value());
    CHECK(r.spec.context_parallel->forward.size() == 7);
    CHECK(r.spec.context_parallel->backward.size() == 8);  // 7 with dK/dV, and dK/dV home
    CHECK(r.spec.context_parallel->beside_compute);
    // Exposed at most as the model's whole exchange time, never negative.
    Seconds total(0.0);
    for (const auto& t : r.predicted.communication) {
      if (t.group == cost::CommGroup::kContext) total += t.time;
    }
    CHECK(r.simulated.breakdown.cp_comm.value() >= 0.0);
    CHECK(r.simulated.breakdown.cp_comm.value() <= total.value());
    CHECK(r.simulated.step_time.value() > r.simulated.breakdown.compute.value());
  }
}
