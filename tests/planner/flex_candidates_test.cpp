// The search tries Megatron-Core's flex dispatcher where tokens cross scale-up domains: Qwen3-30B-A3B
// (128 experts) on two DGX H100 nodes of 8 GPUs. Flex sends a token once to each other domain
// holding one of its experts (DeepEP's README); inside one domain it is the all-to-all, so a
// plan whose ep ranks fit in a node gets no flex twin, and one with whole experts (etp = 1, as
// the published flex recipes run them) on more ep ranks than a node holds does.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include "stepcast/planner/candidates.hpp"
#include "stepcast/workload/workload.hpp"

namespace flex_candidates_test {

using namespace stepcast;

namespace {

planner::SearchSpace two_nodes() {
  planner::SearchSpace space;
  space.gpus = 16;
  space.gpus_per_node = 8;
  space.global_batch = 16;
  space.seq_len = 4096;
  space.max_micro_batch = 1;
  return space;
}

workload::Workload qwen3() {
  return workload::load_workload(std::filesystem::path(STEPCAST_SOURCE_DIR) / "workloads/qwen3-30b-a3b.json");
}

/// Whole experts (etp = 1, given or as tp = 1) on more ep ranks than a node's 8 GPUs.
bool crosses_with_whole_experts(const plan::Plan& p) { return p.ep > 8 && (p.etp > 0 ? p.etp : p.tp) == 1; }

}  // namespace

TEST_SUITE("planner.flex_candidates") {
  TEST_CASE("flex beside each all-to-all plan of whole experts on more ep ranks than a node, and nowhere else") {
    const auto candidates = planner::enumerate_candidates(two_nodes(), qwen3());
    std::multiset<std::string> all_to_all_across;
    std::multiset<std::string> flex;
    for (plan::Plan p : candidates) {
      if (p.moe_dispatcher == plan::MoeDispatcher::kFlex) {
        CHECK(crosses_with_whole_experts(p));
        p.moe_dispatcher = plan::MoeDispatcher::kAllToAll;
        flex.insert(plan::to_string(p));
      } else if (crosses_with_whole_experts(p)) {
        all_to_all_across.insert(plan::to_string(p));
      }
    }
    CHECK(!flex.empty());
    CHECK(flex == all_to_all_across);
  }

  TEST_CASE("a base plan that names its dispatcher keeps it") {
    planner::SearchSpace space = two_nodes();
    space.base.moe_dispatcher = plan::MoeDispatcher::kAllGather;
    for (const plan::Plan& p : planner::enumerate_candidates(space, qwen3()))
      CHECK(p.moe_dispatcher == plan::MoeDispatcher::kAllGather);
  }
}

}  // namespace flex_candidates_test
