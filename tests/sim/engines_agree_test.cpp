// The two engines on one step graph: where nothing contends (one node, idle links) the simulator
// plays each anchor as the analytical rule prices it, so they agree closely.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace engines_agree_test {

using namespace stepcast;

namespace {

struct Both {
  graph::StepPrediction predicted;
  sim::StepResult simulated;
};

Both both_engines(const std::string& text, int nodes) {
  const std::string root = STEPCAST_SOURCE_DIR;
  const workload::Workload w = workload::load_workload(root + "/workloads/llama2-7b.json");
  const topology::Topology t = topology::load_topology(root + "/topologies/p4d-24xlarge.json", nodes);
  plan::Plan p = plan::parse_plan(text);
  p.seq_len = 2048;
  p = plan::resolve(p, w, t.gpu_count());
  plan::validate(p, w, t.gpu_count());
  graph::StepOptions options;
  options.explain = false;
  const graph::StepGraph g = graph::plan_step_graph(w, p, t, options);
  return {graph::evaluate_step(g, w, p, t, options), sim::simulate_step(t, g)};
}

}  // namespace

TEST_SUITE("sim.engines") {
  TEST_CASE("tp-overlap: the simulated step runs each slice's collectives beside its compute, as the formula does") {
    // Both engines expose per slice what the collectives take beyond the compute plus a 1/tp chunk;
    // on one p4d node nothing else shares the NVSwitch, so they agree within 1%.
    for (const char* text : {"tp=8,sp=on,gbs=4", "tp=8,sp=on,gbs=4,tp-overlap=on"}) {
      const Both b = both_engines(text, 1);
      CAPTURE(std::string(text));
      CHECK(b.simulated.step_time.value() == doctest::Approx(b.predicted.step_time.value()).epsilon(0.01));
      CHECK(b.simulated.breakdown.wait("tensor").value() ==
            doctest::Approx(b.predicted.exposed_communication.value()).epsilon(0.02));
    }
  }

  TEST_CASE("overlap-grad-reduce and overlap-param-gather: the simulated step exposes what the formula does") {
    // Llama-2 7B with zero=1 on 2 p4d nodes: the reduction after the backward, or the parameter
    // gather beside the first forward, played as flows; both engines within 2% of each other.
    for (const char* text : {"dp=16,zero=1,gbs=64", "dp=16,zero=1,gbs=64,overlap-grad-reduce=off",
                             "dp=16,zero=1,gbs=64,overlap-param-gather=on"}) {
      const Both b = both_engines(text, 2);
      CAPTURE(std::string(text));
      CHECK(b.simulated.step_time.value() == doctest::Approx(b.predicted.step_time.value()).epsilon(0.02));
    }
  }

  TEST_CASE("FSDP's backward prefetch: gathered after each layer's gradients, every backward gather waits whole") {
    // Llama-2 7B over 8 GPUs of one p4d node: under backward-post each backward gather is issued
    // as the layer before ends, so the next layer waits for all of it in both engines; under
    // backward-pre only each pass's first.
    const Both pre = both_engines("fsdp=8,gbs=8", 1);
    const Both post = both_engines("fsdp=8,gbs=8,fsdp-prefetch=backward-post", 1);
    for (const Both* b : {&pre, &post}) {
      CHECK(b->simulated.step_time.value() == doctest::Approx(b->predicted.step_time.value()).epsilon(0.01));
    }
    double gathers = 0.0;
    double exposed_pre = 0.0;
    for (const auto& t : post.predicted.communication) {
      if (t.name.starts_with("FSDP all-gather (backward)")) {
        gathers = t.time.value();
        CHECK(t.exposed.value() == doctest::Approx(t.time.value()));
      }
    }
    for (const auto& t : pre.predicted.communication) {
      if (t.name.starts_with("FSDP all-gather (backward)")) exposed_pre = t.exposed.value();
    }
    REQUIRE(gathers > 0.0);
    CHECK(exposed_pre < 0.2 * gathers);
    CHECK(post.simulated.step_time.value() - pre.simulated.step_time.value() ==
          doctest::Approx(gathers - exposed_pre).epsilon(0.05));
  }
}

}  // namespace engines_agree_test
