// ZeRO-2 reduce-scatters each micro-batch's gradients as its backward produces them; under a
// pipeline the first stage ends the step with a cooldown of backward passes only, where those
// reduce-scatters have the backward alone to hide behind (the simulator plays it; the step model
// must too). The stages' compute is set by hand relative to the term's own time, so the exposure
// is derived here from the schedule alone.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/graph/analytical.hpp"
#include "stepcast/graph/contributors.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace zero2_cooldown_test {

using namespace stepcast;

TEST_SUITE("graph.zero2_cooldown") {
  TEST_CASE("interleaved p=4, v=2, m=8: five micro-batches of cooldown expose 5 x (R - B)") {
    const std::string root = STEPCAST_SOURCE_DIR;
    const auto w = workload::load_workload(root + "/workloads/llama2-7b.json");
    const topology::Topology topo = topology::load_topology(root + "/topologies/dgx-a100.json", 2);
    plan::Plan p =
        plan::resolve(plan::parse_plan("dp=2,tp=2,pp=4,vp=2,schedule=interleaved,zero=2,mbs=1,gbs=16,flash=on"), w, 16);
    plan::validate(p, w, 16);
    REQUIRE(p.micro_batches() == 8);
    const graph::GraphContext context{w, p, topo, Bytes(25.0 * 1024 * 1024), 5e8, false};
    graph::Pricing pricing;
    pricing.topology = &topo;
    pricing.explain = false;
    // Four stages of 8 layers, each micro-batch's forward and backward as given, half in each of
    // the two model chunks.
    const auto reduce_scatter = [&](double forward_s, double backward_s) {
      cost::ComputeEstimate compute;
      const cost::ChunkCompute chunk{Seconds(forward_s / 2), Seconds(backward_s / 2), Seconds(backward_s / 4), 4, 0.0};
      compute.stages.assign(
          4, cost::StageCompute{
                 Seconds(forward_s), Seconds(backward_s), Seconds(backward_s / 2), 8.0, 0.0, {chunk, chunk}});
      const graph::StepGraph g = graph::build_step_graph(context, compute);
      for (const graph::CommTerm& t : graph::evaluate_communication(g, pricing).terms) {
        if (t.name.starts_with("ZeRO gradient reduce-scatter")) return t;
      }
      FAIL("no ZeRO reduce-scatter");
      return graph::CommTerm{};
    };
    // R: one micro-batch's reduce-scatters (8 per step).
    const double r = reduce_scatter(1.0, 1.0).time.value() / 8.0;
    REQUIRE(r > 0.0);
    // A stage's forward 0.5 R and backward 0.8 R: a 1F1B slot (1.3 R) hides a micro-batch's
    // reduce-scatters, a backward alone (0.8 R) does not.
    const graph::CommTerm t = reduce_scatter(0.5 * r, 0.8 * r);
    // Megatron-LM's interleaved warm-up of rank 0, mirrored by its cooldown: (p-1) x 2 + (v-1) x p
    // = 6 + 4 = 10 model-chunk backwards, 5 micro-batches' worth. Each leaves R - 0.8 R = 0.2 R
    // undone, piling up to 5 x 0.2 R = R at the step's end. The whole step hides no more: 8 R -
    // (3 slots x 1.3 R + 5 x 0.8 R) = 0.1 R. The last bucket alone (5e8 elements = 1e9 B of the
    // 6.74e9 / (tp x pp = 8) x 2 B = 1.68e9 B each micro-batch reduces) takes less than R.
    CHECK(t.exposed.value() == doctest::Approx(r).epsilon(1e-9));
  }
}

}  // namespace zero2_cooldown_test
