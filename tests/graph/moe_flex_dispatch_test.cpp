// The flex dispatcher (Megatron-Core's moe_token_dispatcher_type="flex", DeepEP and HybridEP
// kernels): a token crosses to another scale-up domain once for all of its experts there, then
// reaches the GPUs that hold them over NVLink (DeepSeek-V3 technical report, section 3.2.2), once
// a GPU (DeepEP's get_dispatch_layout: is_token_in_rank). Qwen3-30B-A3B (hidden
// 2048, 128 experts, top-8) with ep=16 over two DGX H100 nodes, as Megatron-Bridge's H100 preset
// runs it (moe_flex_dispatcher_backend="hybridep").
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "stepcast/cost/moe_dispatch.hpp"
#include "support/run_stepcast.hpp"

namespace moe_flex_dispatch_test {

using namespace stepcast;

namespace {

std::vector<nlohmann::json> moe_calls(const std::string& dispatcher, int gpus, int ep) {
  const auto report = nlohmann::json::parse(
      test::run_stepcast("predict --workload qwen3-30b-a3b --topology dgx-h100 --gpus " + std::to_string(gpus) +
                         " --plan \"tp=1,pp=1,mbs=1,zero=1,grad-reduce=bf16,ep=" + std::to_string(ep) +
                         ",recompute=none,gbs=1024,seq=4096,precision=fp8,moe-dispatcher=" + dispatcher + "\" --json"));
  std::vector<nlohmann::json> calls;
  for (const auto& c : report.at("breakdown").at("communication")) {
    if (c.at("name").get<std::string>().starts_with("MoE")) calls.push_back(c);
  }
  return calls;
}

}  // namespace

TEST_SUITE("graph.moe_flex_dispatch") {
  TEST_CASE("remote domains per token: 4 experts in 2 domains, top-2, counted by hand") {
    // Experts {0, 1} in the token's domain, {2, 3} in the other: of the C(4, 2) = 6 pairs only
    // {0, 1} stays home, so 5 / 6 of the tokens cross once.
    CHECK(cost::remote_domains_per_token({4, 2}, 2) == doctest::Approx(5.0 / 6.0));
    // One domain: nothing crosses. Every expert of its own domain: C(E - E/D, k) = 0 for k > E - E/D.
    CHECK(cost::remote_domains_per_token({128, 8}, 1) == 0.0);
    CHECK(cost::remote_domains_per_token({8, 8}, 2) == doctest::Approx(1.0));
  }

  TEST_CASE("remote domains per token under group-limited routing, counted by hand") {
    // 4 experts in 2 groups {0, 1} and {2, 3}, one per domain; a token takes both experts of its
    // best group: it stays home when that group is its own domain's, half the time.
    CHECK(cost::remote_domains_per_token({4, 2, 2, 1}, 2) == doctest::Approx(0.5));
    // 8 experts in 4 groups of 2 on 2 domains ({0..3} and {4..7}); top-2 from the best 2 groups.
    // The other domain holds 2 groups: both among the best 2 with odds 1/6 (then the 4 experts
    // are all there: reached), one of them 4/6 (the top-2 of the 4 miss its 2 with odds C(2,2) /
    // C(4,2) = 1/6), none 1/6. Reached: 1/6 + 4/6 x 5/6 = 26/36.
    CHECK(cost::remote_domains_per_token({8, 2, 4, 2}, 2) == doctest::Approx(26.0 / 36.0));
    // 8 experts in 2 groups of 4, each over 2 of 4 domains; top-2 from the best group. Another
    // domain in the token's best group (odds 1/2) is missed with odds C(2,2) / C(4,2) = 1/6:
    // 3 x 1/2 x 5/6 = 1.25 domains.
    CHECK(cost::remote_domains_per_token({8, 2, 2, 1}, 4) == doctest::Approx(1.25));
  }

  TEST_CASE("GPUs a token reaches: the flex dispatcher sends a token once to each GPU holding one of its experts") {
    // DeepEP's get_dispatch_layout marks a token once per rank (is_token_in_rank), whatever the
    // number of its experts there. 4 experts on 2 GPUs, top-2: of the C(4, 2) = 6 pairs, {0, 1}
    // and {2, 3} stay on one GPU, the other 4 reach both: 2/6 x 1 + 4/6 x 2 = 5/3 copies, not 2.
    CHECK(cost::ranks_reached_per_token({4, 2}, 2) == doctest::Approx(5.0 / 3.0));
    // One GPU holds every expert: one copy. One expert a GPU: top-k copies, as the all-to-all.
    CHECK(cost::ranks_reached_per_token({128, 8}, 1) == 1.0);
    CHECK(cost::ranks_reached_per_token({16, 4}, 16) == doctest::Approx(4.0));
    // Qwen3-30B-A3B on 8 GPUs (16 experts each), top-8 of 128: a GPU is missed with odds
    // C(112, 8) / C(128, 8) = (112 x 111 x ... x 105) / (128 x 127 x ... x 121) = 0.3326:
    // 8 x (1 - 0.3326) = 5.34 copies a token.
    double miss = 1.0;
    for (int i = 0; i < 8; ++i) miss *= (112.0 - i) / (128.0 - i);
    CHECK(miss == doctest::Approx(0.3326).epsilon(0.001));
    CHECK(cost::ranks_reached_per_token({128, 8}, 8) == doctest::Approx(8.0 * (1.0 - miss)));
  }

  TEST_CASE("DeepSeek-V3 on 8 nodes: at most 4 nodes a token, about 3.2 others where free routing reaches 4.6") {
    // 256 experts, top-8, 8 groups of 32 (one a node), a token's experts from its best 4 groups
    // (DeepSeek-V3 report, section 2.1.2). Another node is among the best 4 with odds 4/8, and
    // then one of the 8 of the 4 x 32 = 128 experts lands on it unless all miss its 32:
    // C(96, 8) / C(128, 8) = (96 x 95 x ... x 89) / (128 x 127 x ... x 121) = 0.0924.
    double miss = 1.0;
    for (int i = 0; i < 8; ++i) miss *= (96.0 - i) / (128.0 - i);
    CHECK(miss == doctest::Approx(0.0924).epsilon(0.001));
    CHECK(cost::remote_domains_per_token({256, 8, 8, 4}, 8) == doctest::Approx(7 * 0.5 * (1 - miss)));
    // Free routing: 7 x (1 - C(224, 8) / C(256, 8)).
    double free_miss = 1.0;
    for (int i = 0; i < 8; ++i) free_miss *= (224.0 - i) / (256.0 - i);
    CHECK(cost::remote_domains_per_token({256, 8}, 8) == doctest::Approx(7 * (1 - free_miss)));
  }

  TEST_CASE("Qwen3-30B-A3B, ep=16 over two nodes: one copy per node crosses, one per GPU of its experts inside") {
    const auto calls = moe_calls("flex", 16, 16);
    REQUIRE(calls.size() == 8);  // dispatch and combine, each between and inside the nodes, forward and backward
    // A GPU routes its mbs x seq = 4096 tokens. Between the nodes: 1 - C(64, 8) / C(128, 8) =
    // 1 - (64 x 63 x ... x 57) / (128 x 127 x ... x 121) = 1 - 0.0030959 = 0.9969041 copies a token
    // of 2048 x 2 B, and nccl-tests' S of a 2-rank all-to-all counts the half a rank keeps:
    // S = 4096 x 0.9969041 x 4096 B x 2 = 33,450,552 B.
    CHECK(calls[0].at("ranks") == 2);
    CHECK(calls[0].at("size_bytes").get<double>() == doctest::Approx(33450552.0).epsilon(1e-6));
    // Inside each node a copy reaches each GPU holding one of the token's experts: of 16 GPUs of 8
    // experts each, one is missed with odds C(120, 8) / C(128, 8) = (120 x ... x 113) / (128 x ...
    // x 121) = 0.58773, so 16 x 0.41227 = 6.5963 copies a token, not 8:
    // S = 4096 x 6.5963 x 4096 B = 110,670,000 B over 8 GPUs.
    double miss = 1.0;
    for (int i = 0; i < 8; ++i) miss *= (120.0 - i) / (128.0 - i);
    CHECK(miss == doctest::Approx(0.58773).epsilon(1e-4));
    CHECK(calls[1].at("ranks") == 8);
    CHECK(calls[1].at("size_bytes").get<double>() == doctest::Approx(4096.0 * 16.0 * (1.0 - miss) * 4096.0));
    // The all-to-all dispatcher sends the same 8 copies over 16 ranks, half of them off the node.
    const auto a2a = moe_calls("alltoall", 16, 16);
    REQUIRE(a2a.size() == 4);
    CHECK(a2a[0].at("ranks") == 16);
    CHECK(a2a[0].at("size_bytes").get<double>() == doctest::Approx(134217728.0));
    CHECK(calls[0].at("time_s").get<double>() < a2a[0].at("time_s").get<double>() / 2.0);
  }

  TEST_CASE("search --compare names the compared plan's dispatcher") {
    const std::string out = test::run_stepcast(
        "search --workload qwen3-30b-a3b --topology dgx-h100 --gpus 16 --global-batch 1024 --seq 4096 --precision fp8 "
        "--refine 0 --top 1 --compare \"tp=1,pp=1,mbs=1,zero=1,grad-reduce=bf16,ep=16,moe-dispatcher=flex\"");
    CHECK(out.find("compared: dp=16,tp=1,pp=1,zero=1,mbs=1,recompute=none,ep=16,moe-dispatcher=flex") !=
          std::string::npos);
  }

  TEST_CASE("inside one node the flex dispatcher sends one copy per GPU where the all-to-all sends one per expert") {
    // ep=8 on 16 GPUs: each expert-parallel group fills one node, 16 experts a GPU. A token reaches
    // 8 x (1 - C(112, 8) / C(128, 8)) = 5.34 GPUs, the all-to-all its 8 experts: the same calls
    // over the same GPUs, 5.34 / 8 of the bytes.
    const auto flex = moe_calls("flex", 16, 8);
    const auto a2a = moe_calls("alltoall", 16, 8);
    REQUIRE(flex.size() == a2a.size());
    double miss = 1.0;
    for (int i = 0; i < 8; ++i) miss *= (112.0 - i) / (128.0 - i);
    for (std::size_t i = 0; i < flex.size(); ++i) {
      CHECK(flex[i].at("ranks") == a2a[i].at("ranks"));
      CHECK(flex[i].at("size_bytes").get<double>() ==
            doctest::Approx(a2a[i].at("size_bytes").get<double>() * 8.0 * (1.0 - miss) / 8.0));
      CHECK(flex[i].at("time_s").get<double>() < a2a[i].at("time_s").get<double>());
    }
  }
}

}  // namespace moe_flex_dispatch_test
