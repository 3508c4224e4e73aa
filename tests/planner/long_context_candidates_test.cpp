// The search space with context parallel and uneven pipelines: cp tried up to --max-cp, and
// Llama 3.1 405B's 126 layers offered at pp=16 with the embedding and loss counted as layers.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "stepcast/plan/plan.hpp"
#include "stepcast/planner/candidates.hpp"
#include "stepcast/workload/workload.hpp"

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

}  // namespace

TEST_SUITE("planner.long_context") {
  TEST_CASE("max_cp = 4 on 16 GPUs adds cp = 2 and 4, each as ring (p2p) and Ulysses (a2a); max_cp = 1 adds none") {
    const auto w = workload::load_workload(kSource / "workloads/llama3-8b.json");
    planner::SearchSpace space;
    space.gpus = 16;
    space.global_batch = 16;
    space.base.flash_attention = true;
    const auto plain = planner::enumerate_candidates(space, w);
    CHECK(std::none_of(plain.begin(), plain.end(), [](const plan::Plan& p) { return p.cp > 1; }));
    space.max_cp = 4;
    const auto with_cp = planner::enumerate_candidates(space, w);
    for (const int cp : {2, 4}) {
      for (const auto comm : {plan::ContextComm::kP2p, plan::ContextComm::kA2a}) {
        CHECK(std::any_of(with_cp.begin(), with_cp.end(),
                          [&](const plan::Plan& p) { return p.cp == cp && p.cp_comm == comm && p.gpus() == 16; }));
      }
    }
    CHECK(std::none_of(with_cp.begin(), with_cp.end(), [](const plan::Plan& p) { return p.cp > 4; }));
    // The cp = 1 candidates stay beside the new ones.
    CHECK(with_cp.size() > plain.size());
  }

  TEST_CASE(
      "Llama 3.1 405B on 128 GPUs: pp = 16 comes with the embedding and loss as layers ((126 + 2) / 16 = 8), and is "
      "valid") {
    const auto w = workload::load_workload(kSource / "workloads/llama3-405b.json");
    planner::SearchSpace space;
    space.gpus = 128;
    space.global_batch = 64;
    space.max_micro_batch = 1;
    const auto all = planner::enumerate_candidates(space, w);
    const auto it = std::find_if(all.begin(), all.end(), [](const plan::Plan& p) { return p.pp == 16 && p.tp == 8; });
    REQUIRE(it != all.end());
    CHECK(it->pp_embedding_loss_layers);
    CHECK(plan::problems(*it, w, 128).empty());
    // pp = 2 divides 126 and stays even.
    const auto even = std::find_if(all.begin(), all.end(), [](const plan::Plan& p) { return p.pp == 2; });
    REQUIRE(even != all.end());
    CHECK_FALSE(even->pp_embedding_loss_layers);
  }
}
