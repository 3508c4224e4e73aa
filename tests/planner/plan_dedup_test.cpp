// One row per distinct plan: spellings the model prices identically are merged. The checks come
// from the frameworks' definitions (FSDP FULL_SHARD is ZeRO stage 3; sequence parallel splits
// nothing without tensor parallel) and ZeRO's 16 bytes per parameter (Rajbhandari et al. 2020).
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>

#include "stepcast/plan/plan.hpp"
#include "stepcast/planner/plan_dedup.hpp"
#include "stepcast/planner/search.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace plan_dedup_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

plan::Plan parsed(const std::string& text) {
  const workload::Workload w = workload::load_workload(kSource / "workloads/llama2-7b.json");
  return plan::resolve(plan::parse_plan(text, "--plan"), w, 16);
}

}  // namespace

TEST_SUITE("planner.plan_dedup") {
  TEST_CASE("zero=3 and fsdp=full are one plan, zero=2 and fsdp=grad-op are not (buckets vs a block's gradient)") {
    CHECK(planner::equivalence_key(parsed("dp=16,zero=3")) == planner::equivalence_key(parsed("dp=16,fsdp=full")));
    CHECK(planner::equivalence_key(parsed("dp=16,zero=2")) != planner::equivalence_key(parsed("dp=16,fsdp=grad-op")));
  }

  TEST_CASE("sp=on without tensor parallel, and a schedule without a pipeline, spell nothing") {
    CHECK(planner::equivalence_key(parsed("dp=16,sp=on")) == planner::equivalence_key(parsed("dp=16,sp=off")));
    CHECK(planner::equivalence_key(parsed("dp=8,tp=2,sp=on")) != planner::equivalence_key(parsed("dp=8,tp=2,sp=off")));
    CHECK(planner::equivalence_key(parsed("dp=16,schedule=gpipe")) ==
          planner::equivalence_key(parsed("dp=16,schedule=1f1b")));
  }

  TEST_CASE("two rank orders share a key: merged where priced alike, two rows where the links differ") {
    // dp=2,tp=4,pp=2 on two 8-GPU nodes: stages outermost puts each stage on a node (the pipeline
    // crosses the network, the replicas do not); the other order the reverse.
    CHECK(planner::equivalence_key(parsed("dp=2,tp=4,pp=2")) ==
          planner::equivalence_key(parsed("dp=2,tp=4,pp=2,order=tp-pp-cp-ep-dp")));
    CHECK(planner::equivalence_key(parsed("dp=2,tp=4,pp=2")) != planner::equivalence_key(parsed("dp=4,tp=4")));
  }

  TEST_CASE(
      "Llama-2 7B on 16 A100s: no two rows are one plan priced alike, each fsdp=full plan sits in its zero=3 row") {
    const workload::Workload w = workload::load_workload(kSource / "workloads/llama2-7b.json");
    const topology::Topology topo = topology::load_topology(kSource / "topologies/p4d-24xlarge.json", 2);
    planner::SearchSpace space;
    space.gpus = 16;
    space.gpus_per_node = 8;
    space.global_batch = 64;
    space.seq_len = 4096;
    space.max_micro_batch = 2;
    space.base.flash_attention = true;
    const planner::SearchResult result = planner::search(w, topo, space);
    REQUIRE(!result.ranked.empty());
    CHECK(result.merged > 0);
    // Rows that share a key are rank orders the model prices apart.
    std::map<std::string, const planner::RankedPlan*> rows;
    std::size_t full_shard_rows = 0;
    for (const auto& r : result.ranked) {
      const auto [it, first] = rows.emplace(planner::equivalence_key(r.plan), &r);
      if (!first) {
        CHECK(it->second->plan.rank_order != r.plan.rank_order);
        CHECK(it->second->metrics.step_time != r.metrics.step_time);
      }
      if (r.plan.sharding == plan::Sharding::kFsdpFull) ++full_shard_rows;
      for (const auto& e : r.equivalents) {
        CHECK(planner::equivalence_key(e) == planner::equivalence_key(r.plan));
        CHECK(r.plan.sharding == plan::Sharding::kZero3);
      }
    }
    // The search lists zero=3 before fsdp=full, and the two are priced alike: no fsdp=full row is left.
    CHECK(full_shard_rows == 0);
    // ZeRO-3 over 16 ranks: 16 B/param (fp16 weights and gradients, fp32 Adam state) / 16 per GPU,
    // for Llama-2 7B's 6.74e9 parameters (Touvron et al. 2023): 6.74 GB.
    for (const auto& r : result.ranked) {
      if (r.plan.sharding != plan::Sharding::kZero3 || r.plan.dp != 16 || r.equivalents.empty()) continue;
      CHECK(r.metrics.memory.model_state().value() == doctest::Approx(16.0 * 6.74e9 / 16).epsilon(0.01));
      break;
    }
  }
}

}  // namespace plan_dedup_test
