// The step graph of a plan: layers, TP collectives and FSDP gathers as the contributors place them
// from `stepcast predict`'s inputs. Expected figures come from Llama-2 7B's published shape
// (workloads/llama2-7b.json: 32 layers, h = 4096, ffn = 11008, gated MLP, 32000-token vocabulary).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "stepcast/graph/predict.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace plan_graph_test {

using namespace stepcast;
using graph::Anchor;

namespace {

graph::StepGraph graph_of(const std::string& plan_text, int nodes,
                          const std::string& topology_file = "p4d-24xlarge.json") {
  const std::string root = STEPCAST_SOURCE_DIR;
  const workload::Workload w = workload::load_workload(root + "/workloads/llama2-7b.json");
  const topology::Topology t = topology::load_topology(root + "/topologies/" + topology_file, nodes);
  plan::Plan p = plan::parse_plan(plan_text);
  p.seq_len = 2048;
  p = plan::resolve(p, w, t.gpu_count());
  plan::validate(p, w, t.gpu_count());
  graph::StepOptions options;
  options.explain = false;
  return graph::plan_step_graph(w, p, t, options);
}

std::vector<const graph::CommNode*> at(const graph::StepGraph& g, Anchor anchor) {
  std::vector<const graph::CommNode*> out;
  for (const graph::CommNode& n : g.comm) {
    if (n.anchor == anchor) out.push_back(&n);
  }
  return out;
}

const graph::GroupSpec& group_of(const graph::StepGraph& g, const graph::CommNode& n) { return g.groups[n.group]; }

// One layer: attention 4h^2 (32 kv heads = 32 heads), gated MLP 3 h ffn, two RMSNorms of h:
// 67,108,864 + 135,266,304 + 8,192 = 202,383,360 parameters, 2 B each in bf16.
constexpr double kLayerBytes = 202383360.0 * 2;
// Outside the layers: input embedding and output layer, 2 x 32000 x 4096, and the final norm.
constexpr double kRootBytes = (2.0 * 32000 * 4096 + 4096) * 2;

}  // namespace

TEST_SUITE("graph.plan") {
  TEST_CASE("FULL_SHARD: 32 layers, each gathered twice and reduce-scattered over the 16 ranks") {
    const graph::StepGraph g = graph_of("fsdp=16,mbs=1,gbs=32,flash=on", 2);
    REQUIRE(g.stages.size() == 1);
    CHECK(g.stages.front().layers() == 32);
    const auto gathers = at(g, Anchor::kLayerPrefetch);
    const auto reductions = at(g, Anchor::kLayerEnd);
    REQUIRE(gathers.size() == 2);  // before the forward and again before the backward
    CHECK(gathers[0]->pass == graph::Pass::kForward);
    CHECK(gathers[1]->pass == graph::Pass::kBackward);
    REQUIRE(reductions.size() == 1);
    CHECK(group_of(g, *gathers[0]).ranks == 16);
    CHECK(group_of(g, *gathers[0]).role == "shard group");
    CHECK(gathers[0]->size.value() == doctest::Approx(kLayerBytes).epsilon(1e-9));
    CHECK(reductions[0]->size.value() == doctest::Approx(kLayerBytes).epsilon(1e-9));
    CHECK(gathers[0]->root.value() == doctest::Approx(kRootBytes).epsilon(1e-6));
    CHECK(at(g, Anchor::kGradientReady).empty());
    CHECK(at(g, Anchor::kAfterSlice).empty());
    // The shard group's members at the stage: one group of the 16 GPUs (one per tensor rank).
    const graph::GroupSets members = group_of(g, *gathers[0]).members(0);
    REQUIRE(members.size() == 1);
    CHECK(members.front().size() == 16);
  }

  TEST_CASE("SHARD_GRAD_OP keeps the gathered parameters for the backward") {
    const graph::StepGraph g = graph_of("fsdp=grad-op,mbs=1,gbs=32,flash=on", 2);
    const auto gathers = at(g, Anchor::kLayerPrefetch);
    REQUIRE(gathers.size() == 1);
    CHECK(gathers[0]->pass == graph::Pass::kForward);
  }

  TEST_CASE("HYBRID_SHARD 8x2: gathers over 8 ranks, each shard's gradients all-reduced over the 2 replicas") {
    // A shard holds 1/8 of a layer's gradients: 404,766,720 / 8 B per all-reduce.
    const graph::StepGraph g = graph_of("fsdp=hybrid:8x2,mbs=1,gbs=32,flash=on", 2);
    CHECK(group_of(g, *at(g, Anchor::kLayerPrefetch)[0]).ranks == 8);
    const auto reductions = at(g, Anchor::kLayerEnd);
    REQUIRE(reductions.size() == 2);
    CHECK(reductions[1]->op == cost::CollectiveOp::kAllReduce);
    CHECK(group_of(g, *reductions[1]).ranks == 2);
    CHECK(reductions[1]->size.value() == doctest::Approx(kLayerBytes / 8).epsilon(1e-9));
    // Replica groups take one rank of each shard group: GPUs 0 and 8, 1 and 9, ...
    const graph::GroupSets replicas = group_of(g, *reductions[1]).members(0);
    REQUIRE(replicas.size() == 8);
    CHECK(replicas.front() == std::vector<int>{0, 8});
  }

  TEST_CASE("TP with sequence parallel: an all-gather and a reduce-scatter of s b h per slice") {
    // S = 2048 tokens x 1 sequence x 4096 x 2 B = 16,777,216 B; full recompute adds the
    // forward's two slices to the backward (4). pp = 2: 16 layers per stage.
    const graph::StepGraph g = graph_of("tp=2,pp=2,sp=on,recompute=full,mbs=1,gbs=32", 1);
    CHECK(g.stages.front().layers() == 16);
    const auto slices = at(g, Anchor::kAfterSlice);
    REQUIRE(slices.size() == 2);
    CHECK(slices[0]->op == cost::CollectiveOp::kAllGather);
    CHECK(slices[1]->op == cost::CollectiveOp::kReduceScatter);
    CHECK(slices[0]->size.value() == doctest::Approx(2048.0 * 4096 * 2));
    CHECK(g.forward_slices == 2);
    CHECK(g.backward_slices == 4);
    CHECK(at(g, Anchor::kLayerPrefetch).empty());
    // Each GPU sends to its peer of the next stage, a stage's tp x dp = 2 x 2 = 4 GPUs further
    // (Megatron-Core's order tp-cp-ep-dp-pp: stage 0 on GPUs 0-3, stage 1 on 4-7).
    const auto sends = at(g, Anchor::kStageSend);
    REQUIRE(sends.size() == 1);
    CHECK(sends[0]->blocking);
    CHECK(group_of(g, *sends[0]).members(0).front() == std::vector<int>{0, 4});
  }

  TEST_CASE("fp8 with sequence parallel: the all-gather carries the 1-byte copy, the reduce-scatter 16-bit sums") {
    // S = 2048 x 4096 elements: gathered in fp8, 1 B each = 8,388,608 B; in mxfp8 with an E8M0
    // scale per 32 elements, 1.03125 B each = 8,650,752 B; reduced in bf16, 2 B each = 16,777,216 B.
    // (A DGX B200 node: GPUs with fp8 and mxfp8 rates.)
    const auto sizes = [](const std::string& plan) {
      const graph::StepGraph g = graph_of(plan, 1, "dgx-b200.json");
      const auto slices = at(g, Anchor::kAfterSlice);
      REQUIRE(slices.size() == 2);
      return std::pair{slices[0]->size.value(), slices[1]->size.value()};
    };
    const auto fp8 = sizes("tp=2,pp=2,sp=on,mbs=1,gbs=32,precision=fp8");
    CHECK(fp8.first == doctest::Approx(2048.0 * 4096));
    CHECK(fp8.second == doctest::Approx(2048.0 * 4096 * 2));
    CHECK(sizes("tp=2,pp=2,sp=on,mbs=1,gbs=32,precision=mxfp8").first == doctest::Approx(2048.0 * 4096 * 1.03125));
  }

  TEST_CASE("ZeRO-1: gradients reduce-scattered in buckets, then all of a rank's parameters gathered once") {
    const graph::StepGraph g = graph_of("dp=16,zero=1,mbs=1,gbs=32,flash=on", 2);
    CHECK(at(g, Anchor::kLayerPrefetch).empty());
    const auto buckets = at(g, Anchor::kGradientReady);
    REQUIRE(buckets.size() == 1);
    CHECK(buckets[0]->op == cost::CollectiveOp::kReduceScatter);
    const auto gather = at(g, Anchor::kAfterOptimizer);
    REQUIRE(gather.size() == 1);
    // 32 layers and the parameters outside them, 2 B each.
    CHECK(gather[0]->size.value() == doctest::Approx(32 * kLayerBytes + kRootBytes));
  }

  TEST_CASE("DDP: gradient buckets, no per-layer collectives") {
    const graph::StepGraph g = graph_of("dp=16,mbs=1,gbs=32,flash=on", 2);
    CHECK(at(g, Anchor::kLayerPrefetch).empty());
    CHECK(at(g, Anchor::kAfterSlice).empty());
    const auto buckets = at(g, Anchor::kGradientReady);
    REQUIRE(buckets.size() == 1);
    // 25 MiB buckets (PyTorch DDP's bucket_cap_mb) of 2-byte gradients: 6.74e9 x 2 B / 25 MiB.
    CHECK(buckets[0]->size.value() == doctest::Approx(25.0 * 1024 * 1024));
    CHECK(buckets[0]->pieces == doctest::Approx((32 * kLayerBytes + kRootBytes) / (25.0 * 1024 * 1024)));
  }
}

}  // namespace plan_graph_test
