// The search offloads activations to make a plan fit where a topology has a host link (the GB200
// NVL72's Grace memory over NVLink-C2C): a one-stage, no-recompute candidate over the GPU's
// memory takes the fewest offloaded layers that fit, as Megatron-Bridge's GB200 presets offload
// layers to fit (cpu_offloading_num_layers). Checked against the memory model directly: N fits,
// N - 1 does not. A topology without a host link never gets an offloaded plan.
#include <doctest/doctest.h>

#include <filesystem>

#include "stepcast/cost/memory.hpp"
#include "stepcast/planner/search.hpp"
#include "stepcast/topology/topology.hpp"
#include "stepcast/workload/workload.hpp"

namespace offload_search_test {

using namespace stepcast;

namespace {

const std::filesystem::path kRoot = STEPCAST_SOURCE_DIR;

planner::SearchSpace llama3_70b_space(int gpus, int gpus_per_node) {
  planner::SearchSpace space;
  space.gpus = gpus;
  space.gpus_per_node = gpus_per_node;
  space.global_batch = 2 * gpus;
  space.seq_len = 8192;
  space.max_micro_batch = 2;
  space.base.flash_attention = true;
  return space;
}

bool fits(const workload::Workload& w, const topology::Topology& topo, plan::Plan p, int offloaded) {
  p.offload_layers = offloaded;
  return cost::check_fit(cost::estimate_memory(w, p), topo.gpu().memory).fits;
}

}  // namespace

TEST_SUITE("planner.offload_search") {
  TEST_CASE("on a GB200 NVL72, plans over memory offload the fewest layers that fit, and only one-stage ones") {
    const auto w = workload::load_workload(kRoot / "workloads/llama3-70b.json");
    const auto topo = topology::load_topology(kRoot / "topologies/gb200-nvl72.json");
    REQUIRE(topo.host_link());
    planner::SearchOptions options;
    options.threads = 2;
    const planner::SearchResult result = planner::search(w, topo, llama3_70b_space(72, 72), options);
    int offloaded = 0;
    for (const planner::RankedPlan& r : result.ranked) {
      const plan::Plan& p = r.plan;
      if (p.offload_layers == 0) continue;
      ++offloaded;
      CAPTURE(plan::to_string(p));
      CHECK(p.pp == 1);
      CHECK(p.recompute == plan::Recompute::kNone);
      CHECK(p.offload_layers < w.shape->layers);
      CHECK(fits(w, topo, p, p.offload_layers));
      CHECK_FALSE(fits(w, topo, p, p.offload_layers - 1));
    }
    CHECK(offloaded > 0);
  }

  TEST_CASE("without a host link no searched plan offloads") {
    const auto w = workload::load_workload(kRoot / "workloads/llama3-70b.json");
    const auto topo = topology::load_topology(kRoot / "topologies/dgx-b200.json", 8);
    REQUIRE_FALSE(topo.host_link());
    planner::SearchOptions options;
    options.threads = 2;
    const planner::SearchResult result = planner::search(w, topo, llama3_70b_space(64, 8), options);
    REQUIRE_FALSE(result.ranked.empty());
    for (const planner::RankedPlan& r : result.ranked) CHECK(r.plan.offload_layers == 0);
  }
}

}  // namespace offload_search_test
