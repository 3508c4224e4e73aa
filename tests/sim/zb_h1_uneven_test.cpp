// ZB-H1 on stages of unequal time (Qi et al. 2023, section 3.1: each stage s defers its
// weight-gradient pass W s micro-batches behind its input-gradient pass B), derived by hand from
// each stage's F, B and W: the analytical engine's closed form and the simulator's schedule on one
// graph that holds no calls, so the step is the pipeline's alone.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "hand_graph.hpp"
#include "star_topology.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/workload/workload.hpp"

namespace zb_h1_uneven_test {

using namespace stepcast;

namespace {

constexpr double kMs = 1e-3;
constexpr int kMicroBatches = 4;

struct Passes {
  double forward;      // F, ms
  double backward;     // B: the input gradients, ms
  double weight_grad;  // W, ms
};

/// Three stages of the given passes, m = 4 micro-batches.
graph::StepGraph uneven(plan::Schedule schedule, const std::vector<Passes>& stages) {
  graph::StepGraph g = sim::test::hand_step(3, kMicroBatches, schedule, 1, Seconds(0.0), Seconds(0.0));
  for (std::size_t s = 0; s < stages.size(); ++s) {
    graph::StageWork& st = g.stages[s];
    st.forward = st.chunks[0].forward = seconds(stages[s].forward * kMs);
    st.backward = st.chunks[0].backward = seconds((stages[s].backward + stages[s].weight_grad) * kMs);
    st.weight_grad = st.chunks[0].weight_grad = seconds(stages[s].weight_grad * kMs);
    g.compute.stages.push_back({st.forward, st.backward, st.weight_grad, 1.0, 0.0, st.chunks});
  }
  // The compute model's critical stage: the largest F + B + W.
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const Seconds work = (g.stages[s].forward + g.stages[s].backward) * kMicroBatches;
    if (work > g.compute.time) {
      g.compute.time = work;
      g.compute.critical_stage = static_cast<int>(s);
    }
  }
  return g;
}

struct Both {
  double predicted;
  double simulated;
};

/// Both engines' step time of the graph; the plan (Llama 2 7B's, m = 4 on 3 stages) only sizes
/// the memory the prediction also reports.
Both both_engines(const graph::StepGraph& g) {
  const std::string root = STEPCAST_SOURCE_DIR;
  const workload::Workload w = workload::load_workload(root + "/workloads/llama2-7b.json");
  plan::Plan p = plan::parse_plan("pp=3,pp-first-layers=10,pp-last-layers=10,mbs=1,gbs=4,seq=2048");
  p.schedule = g.schedule;
  p = plan::resolve(p, w, 3);
  plan::validate(p, w, 3);
  REQUIRE(p.micro_batches() == kMicroBatches);
  const topology::Topology t = sim::test::star_topology(3, gbyte_per_s(50));
  graph::StepOptions options;
  options.explain = false;
  return {graph::evaluate_step(g, w, p, t, options).step_time.value(), sim::simulate_step(t, g).step_time.value()};
}

// (F, B, W) = (2, 3, 1), (2, 3, 1), (3, 3, 1) ms: the first two stages hold the embedding and
// fewer layers, the last the output layer and loss.
const std::vector<Passes> kStages = {{2, 3, 1}, {2, 3, 1}, {3, 3, 1}};

}  // namespace

TEST_SUITE("sim.zb_h1") {
  TEST_CASE("ZB-H1 with a heavier last stage: both engines take 36 ms, derived by hand, where 1F1B takes 40") {
    // ZB-H1. Micro-batch 0 reaches stage 2 after F0 + F1 = 4 ms. Stage 2 defers its W's two
    // micro-batches and from then runs F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 W2 W3 without a gap: its F1,
    // F2, F3 leave stage 1 at 6, 15 and 22 ms, before it asks for them at 10, 16 and 23 ms. So
    // 4 x (3 + 3 + 1) = 28 ms, 4-32 ms. Its B3 ends before its last three W's, at 32 - 3 = 29 ms,
    // and runs down: stage 1's B3 29-32 ms (then its last two W's, to 34), stage 0's B3 32-35 ms
    // (stage 0 defers none), its W3 35-36 ms. Step: 4 + 28 - 3 + 3 + 3 + 1 = 36 ms. A third of
    // 1F1B's bubble, as on equal stages with F = B = W, would give 28 + (6 + 6) / 3 = 32 ms.
    const Both zb = both_engines(uneven(plan::Schedule::kZbH1, kStages));
    CHECK(zb.predicted == doctest::Approx(36 * kMs));
    CHECK(zb.simulated == doctest::Approx(36 * kMs));

    // 1F1B. Stage 2 runs F B with B + W = 4 ms, 4 x 7 = 28 ms from 4 to 32 ms; its B3 ends last,
    // then stage 1's 32-36 ms and stage 0's 36-40 ms: m x slowest + the others' F + B + W.
    const Both one = both_engines(uneven(plan::Schedule::k1F1B, kStages));
    CHECK(one.predicted == doctest::Approx(40 * kMs));
    CHECK(one.simulated == doctest::Approx(40 * kMs));
  }
  TEST_CASE(
      "1F1B with the slowest stage first: both engines take 28 ms, derived by hand, not m x slowest + the others") {
    // (F, B) = (3, 4), (1, 2), (1, 2) ms, m = 4. Stage 0 runs F0 F1 F2 (0-9) while micro-batch 0
    // goes to stage 2 and back (stage 1's B0 ends at 9), then B0 F3 B1 B2 B3, each backward back
    // from stage 1 before stage 0 asks for it (at 9, 12, 19, 22 against 9, 16, 20, 24): 4 x 7 = 28
    // ms. m x slowest + the others' F + B would give 28 + 6 = 34 ms.
    const Both one = both_engines(uneven(plan::Schedule::k1F1B, {{3, 4, 0}, {1, 2, 0}, {1, 2, 0}}));
    CHECK(one.predicted == doctest::Approx(28 * kMs));
    CHECK(one.simulated == doctest::Approx(28 * kMs));
  }
}

}  // namespace zb_h1_uneven_test
