// Rank placement, Megatron-Core's default order tp-cp-ep-dp-pp (the stages outermost, each
// stage's GPUs contiguous; parallel_state.py) against tp-pp-cp-ep-dp (the stages inside each
// replica), derived by hand: GPU = (stage x replicas + replica) x tp + tensor rank, or
// (replica x pp + stage) x tp + tensor rank; a group's span is its GPUs' nodes.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace rank_order_test {

using namespace stepcast;

namespace {

struct Built {
  topology::Topology topology;
  graph::StepGraph graph;
};

Built build(const std::string& workload, const std::string& topology, int nodes, const std::string& plan_text) {
  const std::string root = STEPCAST_SOURCE_DIR;
  const workload::Workload w = workload::load_workload(root + "/workloads/" + workload + ".json");
  topology::Topology t = topology::load_topology(root + "/topologies/" + topology + ".json", nodes);
  plan::Plan p = plan::resolve(plan::parse_plan(plan_text), w, t.gpu_count());
  plan::validate(p, w, t.gpu_count());
  graph::StepOptions options;
  options.explain = false;
  graph::StepGraph g = graph::plan_step_graph(w, p, t, options);
  return {std::move(t), std::move(g)};
}

/// Nodes (scale-up domains) the group of `role` spans, and its stride.
std::pair<int, int> span(const Built& b, const std::string& role) {
  for (const graph::GroupSpec& g : b.graph.groups) {
    if (g.role == role) return {b.topology.tiers(g.ranks, g.stride).nodes, g.stride};
  }
  FAIL("no group ", role);
  return {0, 0};
}

}  // namespace

TEST_SUITE("graph.rank_order") {
  TEST_CASE("the two numberings, by hand") {
    // tp = 4, pp = 4, 4 replicas: replica 1, stage 2, tensor rank 3.
    const graph::Layout outer{4, 4, 4, true};
    CHECK(outer.gpu(1, 2, 3) == (2 * 4 + 1) * 4 + 3);  // 39
    CHECK(outer.replica_of(39) == 1);
    CHECK(outer.stage_of(39) == 2);
    const graph::Layout inner{4, 4, 4, false};
    CHECK(inner.gpu(1, 2, 3) == (1 * 4 + 2) * 4 + 3);  // 27
    CHECK(inner.replica_of(27) == 1);
    CHECK(inner.stage_of(27) == 2);
  }

  TEST_CASE("Llama 3 70B dp=4 tp=4 pp=4 on 64 H100: Megatron keeps a stage's data-parallel group on two nodes") {
    // A stage holds tp x dp = 16 contiguous GPUs (two 8-GPU nodes): the data group's 4 ranks sit
    // tp = 4 apart (GPUs 0, 4, 8, 12: 2 nodes) and a pipeline send goes 16 GPUs on (2 nodes).
    const Built megatron = build("llama3-70b", "dgx-h100", 8, "dp=4,tp=4,pp=4,sp=on,zero=1");
    CHECK(span(megatron, "data") == std::pair{2, 4});
    CHECK(span(megatron, "pipeline") == std::pair{2, 16});
    // Stages inside each replica: a replica's 4 stages fill two nodes, so the data group's ranks
    // sit tp x pp = 16 apart (GPUs 0, 16, 32, 48: 4 nodes) and a send goes 4 GPUs on.
    const Built inside = build("llama3-70b", "dgx-h100", 8, "dp=4,tp=4,pp=4,sp=on,zero=1,order=tp-pp-cp-ep-dp");
    CHECK(span(inside, "data") == std::pair{4, 16});
    CHECK(span(inside, "pipeline") == std::pair{1, 4});
  }

  TEST_CASE("two NVL72 racks, pp=2: Megatron puts each stage in one rack, expert and data groups on NVLink") {
    // 144 GPUs, tp = 1, pp = 2, dp = 72, ep = 8: stage s is rack s. The data group (72 ranks,
    // stride 1) and the expert group (8 ranks, stride 1) stay inside a rack; a send crosses.
    const std::string plan = "dp=72,pp=2,ep=8,zero=1,gbs=288";
    const Built megatron = build("mixtral-8x7b", "gb200-nvl72", 36, plan);
    CHECK(span(megatron, "data") == std::pair{1, 1});
    CHECK(span(megatron, "expert parallel") == std::pair{1, 1});
    CHECK(span(megatron, "pipeline") == std::pair{2, 72});
    // Stages inside each replica: the data group's ranks sit pp = 2 apart over both racks.
    const Built inside = build("mixtral-8x7b", "gb200-nvl72", 36, plan + ",order=tp-pp-cp-ep-dp");
    CHECK(span(inside, "data") == std::pair{2, 2});
    CHECK(span(inside, "pipeline") == std::pair{1, 1});
  }

  TEST_CASE("order= is read as Megatron-Core writes it") {
    CHECK(plan::parse_plan("order=tp-cp-ep-dp-pp").rank_order == plan::RankOrder::kStagesOutermost);
    CHECK(plan::parse_plan("order=tp-dp-pp").rank_order == plan::RankOrder::kStagesOutermost);  // torchtitan's mesh
    CHECK(plan::parse_plan("order=tp-pp-dp").rank_order == plan::RankOrder::kStagesInsideReplicas);
    CHECK(plan::parse_plan("tp=2").rank_order == plan::RankOrder::kStagesOutermost);
  }
}

}  // namespace rank_order_test
