// The search space with context parallel and uneven pipelines: cp tried up to --max-cp, Llama 3.1
// 405B's 126 layers offered at pp=8 and 16 with the embedding and loss counted as layers (also
// interleaved), DeepSeek-V3's 61 layers with a shorter first and last stage, both rank orders,
// and tensor-parallel overlap beside sequence parallel.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "stepcast/plan/plan.hpp"
#include "stepcast/planner/candidates.hpp"
#include "stepcast/workload/workload.hpp"

namespace long_context_candidates_test {

using namespace stepcast;

namespace {

const std::filesystem::path kSource = STEPCAST_SOURCE_DIR;

}  // namespace

TEST_SUITE("planner.long_context") {
  TEST_CASE("max_cp = 4 on 16 GPUs adds cp = 2 and 4, each as ring (p2p) and Ulysses (a2a), max_cp = 1 adds none") {
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

  TEST_CASE("Llama 3.1 405B on 1,024 GPUs, max_cp = 2: Megatron-Bridge's H100 plan is a candidate and valid") {
    // Megatron-Bridge's DGX-H100 table (../shared/data/training_runs_megatron_bridge.md): TP 8,
    // PP 8, CP 2, VP 8, GBS 512, MBS 1, sequence 8192. (126 + 2) / 8 = 16 layers a stage, 2 per
    // chunk at vp = 8, so the pipeline counts the embedding and loss as layers.
    const auto w = workload::load_workload(kSource / "workloads/llama3-405b.json");
    planner::SearchSpace space;
    space.gpus = 1024;
    space.global_batch = 512;
    space.seq_len = 8192;
    space.max_micro_batch = 1;
    space.max_cp = 2;
    space.base.flash_attention = true;  // context parallel runs in fused attention
    const auto all = planner::enumerate_candidates(space, w);
    const auto it = std::find_if(all.begin(), all.end(), [](const plan::Plan& p) {
      return p.tp == 8 && p.pp == 8 && p.cp == 2 && p.vp == 8 && p.sequence_parallel && p.tp_overlap &&
             p.rank_order == plan::RankOrder::kStagesOutermost;
    });
    REQUIRE(it != all.end());
    CHECK(it->dp == 8);
    CHECK(it->pp_embedding_loss_layers);
    CHECK(it->schedule == plan::Schedule::kInterleaved);
    CHECK(plan::problems(*it, w, 1024).empty());
  }

  TEST_CASE("DeepSeek-V3's 61 layers at pp = 16: middle stages of 4, a first stage of 3 and a last of 2") {
    // 61 divides by neither 16 nor 16 after adding 2; ceil(61 / 16) = 4 for the 14 middle stages
    // leaves 61 - 56 = 5 for the first and last: 3 and 2 (the last also runs the output layer).
    // gcd(3, 4, 2) = 1: no interleaving.
    const auto w = workload::load_workload(kSource / "workloads/deepseek-v3.json");
    planner::SearchSpace space;
    space.gpus = 256;
    space.global_batch = 256;
    space.max_micro_batch = 1;
    const auto all = planner::enumerate_candidates(space, w);
    const auto it = std::find_if(all.begin(), all.end(), [](const plan::Plan& p) { return p.pp == 16; });
    REQUIRE(it != all.end());
    CHECK(it->pp_first_layers == 3);
    CHECK(it->pp_last_layers == 2);
    CHECK_FALSE(it->pp_embedding_loss_layers);
    CHECK(std::none_of(all.begin(), all.end(), [](const plan::Plan& p) { return p.pp == 16 && p.vp > 1; }));
    // pp = 2: 31 and 30 layers.
    const auto two = std::find_if(all.begin(), all.end(), [](const plan::Plan& p) { return p.pp == 2; });
    REQUIRE(two != all.end());
    CHECK(two->pp_first_layers == 31);
    CHECK(two->pp_last_layers == 30);
  }

  TEST_CASE("latent attention adds recompute-modules=mla_up_proj beside each selective candidate, GQA does not") {
    // Megatron-Bridge's DeepSeek-V3 and Kimi-K2 presets recompute the up projections: each plan
    // the space offers with Korthikanti's selective recompute comes once more with mla_up_proj.
    planner::SearchSpace space;
    space.gpus = 64;
    space.global_batch = 64;
    space.max_micro_batch = 1;
    const auto deepseek =
        planner::enumerate_candidates(space, workload::load_workload(kSource / "workloads/deepseek-v3.json"));
    const auto named = [](const plan::Plan& p) { return p.recompute_modules_given; };
    const auto up = static_cast<std::size_t>(std::count_if(deepseek.begin(), deepseek.end(), [](const plan::Plan& p) {
      return p.recompute_modules_given && p.recompute_modules == plan::kRecomputeMlaUpProj &&
             p.recompute == plan::Recompute::kSelective;
    }));
    const auto core = static_cast<std::size_t>(std::count_if(deepseek.begin(), deepseek.end(), [](const plan::Plan& p) {
      return p.recompute == plan::Recompute::kSelective && !p.recompute_modules_given;
    }));
    CHECK(up > 0);
    CHECK(up == core);
    CHECK(static_cast<std::size_t>(std::count_if(deepseek.begin(), deepseek.end(), named)) == up);
    const auto llama =
        planner::enumerate_candidates(space, workload::load_workload(kSource / "workloads/llama3-70b.json"));
    CHECK(std::none_of(llama.begin(), llama.end(), named));
  }

  TEST_CASE("both rank orders where a pipeline has replicas and tp is below a node, tp-overlap only beside sp") {
    const auto w = workload::load_workload(kSource / "workloads/llama3-8b.json");
    planner::SearchSpace space;
    space.gpus = 16;
    space.global_batch = 16;
    const auto all = planner::enumerate_candidates(space, w);
    const auto has = [&](int tp, int pp, plan::RankOrder order) {
      return std::any_of(all.begin(), all.end(),
                         [&](const plan::Plan& p) { return p.tp == tp && p.pp == pp && p.rank_order == order; });
    };
    CHECK(has(2, 2, plan::RankOrder::kStagesInsideReplicas));        // dp = 4 replicas of a 2-stage pipeline
    CHECK_FALSE(has(2, 1, plan::RankOrder::kStagesInsideReplicas));  // no pipeline
    CHECK_FALSE(has(2, 8, plan::RankOrder::kStagesInsideReplicas));  // dp = 1: one pipeline
    // tp = 8 fills a node: on 32 GPUs (dp = 2, pp = 2) every data and pipeline group has one rank
    // per node, on the GPU's own NIC, in either order, so only the default is tried.
    space.gpus = 32;
    const auto wider = planner::enumerate_candidates(space, w);
    CHECK(std::any_of(wider.begin(), wider.end(), [](const plan::Plan& p) { return p.tp == 8 && p.pp == 2; }));
    CHECK(std::none_of(wider.begin(), wider.end(), [](const plan::Plan& p) {
      return p.tp == 8 && p.rank_order == plan::RankOrder::kStagesInsideReplicas;
    }));
    CHECK(
        std::none_of(all.begin(), all.end(), [](const plan::Plan& p) { return p.tp_overlap && !p.sequence_parallel; }));
    CHECK(std::any_of(all.begin(), all.end(), [](const plan::Plan& p) { return p.tp_overlap; }));
  }
}

}  // namespace long_context_candidates_test
