// A new parallel dimension is one contributor: this test adds a toy one (every layer pass of the
// forward all-reduces 8 MiB over each replica's 8 GPUs before its compute) through the graph
// builder alone, and both engines evaluate it without a line of their code knowing of it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "stepcast/graph/analytical.hpp"
#include "stepcast/graph/contributors.hpp"
#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/sim/step_sim.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace toy_dimension_test {

using namespace stepcast;

namespace {

constexpr double kToyBytes = 8.0 * 1024 * 1024;

void add_toy(const graph::GraphContext&, graph::StepGraph& g) {
  const graph::Layout layout = g.layout;
  graph::GroupSpec spec;
  spec.role = "toy";
  spec.ranks = layout.tp * layout.pp * layout.replicas;
  spec.members = [layout](int stage) {
    graph::GroupSets groups(1);
    for (int r = 0; r < layout.replicas; ++r) groups.front().push_back(layout.gpu(r, stage, 0));
    return groups;
  };
  graph::CommNode n;
  n.name = "toy all-reduce";
  n.group = g.add_group(std::move(spec));
  n.op = cost::CollectiveOp::kAllReduce;
  n.size = Bytes(kToyBytes);
  n.anchor = graph::Anchor::kLayerStart;
  n.pass = graph::Pass::kForward;
  g.comm.push_back(n);
}

}  // namespace

TEST_SUITE("sim.toy_dimension") {
  TEST_CASE("a toy dimension added by one contributor is priced, placed and simulated by both engines") {
    const std::string root = STEPCAST_SOURCE_DIR;
    const workload::Workload w = workload::load_workload(root + "/workloads/llama2-7b.json");
    const topology::Topology t = topology::load_topology(root + "/topologies/dgx-a100.json", 1);
    plan::Plan p = plan::resolve(plan::parse_plan("dp=8,gbs=16,seq=2048,flash=on"), w, 8);
    plan::validate(p, w, 8);
    graph::StepOptions options;
    options.explain = false;
    const graph::StepGraph plain = graph::plan_step_graph(w, p, t, options);
    std::vector<graph::Contributor> with_toy(graph::default_contributors().begin(),
                                             graph::default_contributors().end());
    with_toy.push_back(add_toy);
    const graph::GraphContext context{w, p, t, options.memory.ddp_bucket, options.memory.zero_bucket_elements, false};
    const graph::StepGraph toy = graph::build_step_graph(context, plain.compute, with_toy);
    REQUIRE(toy.comm.size() == plain.comm.size() + 1);

    // Analytical: 32 layers x m = 2 micro-batches of forward passes, each call blocking: 64 calls
    // of the collective model's all-reduce of 8 MiB over the node's 8 GPUs, each with the step's
    // collective overhead, all exposed.
    const graph::StepPrediction before = graph::evaluate_step(plain, w, p, t, options);
    const graph::StepPrediction after = graph::evaluate_step(toy, w, p, t, options);
    const graph::CommTerm& term = after.communication.back();
    CHECK(term.role == "toy");
    CHECK(term.calls.count() == 64);
    const cost::CollectivePrice one = cost::price_collective(cost::collective_group(t, t.tiers(8, 1)),
                                                             cost::CollectiveOp::kAllReduce, Bytes(kToyBytes), {});
    const double overhead = after.compute_detail.params.collective_overhead.value();
    CHECK(term.time.value() == doctest::Approx(64.0 * (one.time.value() + overhead)).epsilon(1e-9));
    CHECK(term.exposed.value() == doctest::Approx(term.time.value()));
    CHECK(after.step_time.value() - before.step_time.value() >= term.exposed.value() * (1.0 - 1e-9));

    // Simulated: the compute stream waits on the same 64 calls, alone on the node's NVSwitch.
    const sim::StepResult simulated = sim::simulate_step(t, toy);
    CHECK(simulated.breakdown.wait("toy").value() == doctest::Approx(term.exposed.value()).epsilon(0.02));
    CHECK(simulated.step_time.value() == doctest::Approx(after.step_time.value()).epsilon(0.02));
  }
}

}  // namespace toy_dimension_test
