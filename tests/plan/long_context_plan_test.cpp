// Context parallel and uneven pipelines in plans: the keys, the GPU count dp x tp x cp x pp, the
// uneven splits (Llama 3.1 405B's 126 layers on 16 stages) and every rule with its numbers.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "stepcast/plan/plan.hpp"

namespace long_context_plan_test {

using namespace stepcast;

namespace {

// Llama 3.1 405B (Dubey et al. 2024, Table 3; Hugging Face config.json): 126 layers, 128 heads,
// 8 key/value heads.
workload::Workload llama3_405b_shape() {
  workload::Workload w;
  w.name = "llama3-405b";
  workload::TransformerShape s;
  s.layers = 126;
  s.hidden = 16384;
  s.heads = 128;
  s.kv_heads = 8;
  s.ffn_hidden = 53248;
  s.gated_mlp = true;
  s.vocab = 128256;
  s.seq_len = 8192;
  w.shape = s;
  w.parameters = workload::parameter_count(s);
  return w;
}

std::vector<std::string> rules(const std::string& text, int gpus) {
  const auto w = llama3_405b_shape();
  std::vector<std::string> out;
  for (const auto& v : plan::problems(plan::resolve(plan::parse_plan(text), w, gpus), w, gpus)) {
    out.push_back(plan::describe(v));
  }
  return out;
}

bool has(const std::vector<std::string>& found, const std::string& text) {
  for (const auto& f : found) {
    if (f.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_SUITE("plan.long_context") {
  TEST_CASE("cp joins the GPU count: dp is derived as GPUs / (tp x cp x pp)") {
    const auto w = llama3_405b_shape();
    const auto p = plan::resolve(plan::parse_plan("tp=8,cp=4,pp=2,flash=on"), w, 128);
    CHECK(p.dp == 2);  // 128 / (8 x 4 x 2)
    CHECK(p.gpus() == 128);
    CHECK(p.gradient_ranks() == 8);  // dp x cp hold the same weights
    CHECK(plan::problems(p, w, 128).empty());
    CHECK(plan::to_string(p).find(",cp=4,cp-comm=p2p") != std::string::npos);
  }

  TEST_CASE("context-parallel rules name their numbers") {
    CHECK(has(rules("tp=8,cp=4,dp=4,flash=on", 64), "dp*tp*cp*pp = 4*8*4*1 = 128 must equal the number of GPUs (64)"));
    CHECK(has(rules("tp=8,cp=3,flash=on,seq=8188", 24), "sequence length (8188) must be divisible by 2*cp = 6"));
    CHECK(has(rules("tp=8,cp=4,seq=32768", 32), "cp=4 needs fused attention (flash=on)"));
    // Ulysses splits heads: 8 key/value heads cannot go over tp x cp = 8 x 2.
    CHECK(has(rules("tp=8,cp=2,cp-comm=a2a,flash=on", 16),
              "cp-comm=a2a needs key/value heads (8) divisible by tp*cp = 8*2 = 16"));
    CHECK(has(rules("tp=8,cp-comm=a2a,flash=on", 8), "cp-comm= needs context parallel (cp > 1, got cp=1)"));
    CHECK(rules("tp=4,cp=2,cp-comm=a2a,flash=on", 8).empty());  // 128 heads, 8 kv heads over 4 x 2
  }

  TEST_CASE("Llama 3.1 405B on 16 stages: embedding and loss counted as layers give 7, 8 x 14, 7") {
    // Dubey et al. 2024, section 3.3.2: one transformer layer fewer on the first and last
    // stage; (126 + 2) / 16 = 8 per stage.
    const auto w = llama3_405b_shape();
    const auto p = plan::resolve(plan::parse_plan("tp=8,pp=16,pp-embedding-loss-layers=on"), w, 128);
    CHECK(plan::problems(p, w, 128).empty());
    std::vector<int> expected(16, 8);
    expected.front() = 7;
    expected.back() = 7;
    CHECK(plan::stage_layers(p, 126) == expected);
    // The even rule alone refuses it.
    CHECK(has(rules("tp=8,pp=16", 128), "layers (126) must be divisible by pp*vp = 16*1 = 16"));
  }

  TEST_CASE("pp-first-layers / pp-last-layers: the other stages share the rest evenly") {
    const auto w = llama3_405b_shape();
    // 126 - 7 - 7 = 112 = 14 stages x 8; 126 - 6 - 6 = 114 is not a multiple of 14.
    const auto p = plan::resolve(plan::parse_plan("tp=8,pp=16,pp-first-layers=7,pp-last-layers=7"), w, 128);
    CHECK(plan::problems(p, w, 128).empty());
    CHECK(plan::stage_layers(p, 126).front() == 7);
    CHECK(plan::stage_layers(p, 126)[1] == 8);
    CHECK(
        has(rules("tp=8,pp=16,pp-first-layers=6,pp-last-layers=6", 128),
            "layers (126) - pp-first-layers (6) - pp-last-layers (6) = 114 must be divisible by the other 14 stages"));
    CHECK(has(rules("tp=8,pp=16,pp-first-layers=7,pp-embedding-loss-layers=on", 128), "give one of"));
    CHECK(rules("tp=8,pp=8,pp-embedding-loss-layers=on", 64).empty());  // 128 / 8 = 16 per stage
    CHECK(has(rules("tp=8,pp=6,pp-embedding-loss-layers=on", 48), "= 126 + 2 = 128 must be divisible by pp (6)"));
  }
}

}  // namespace long_context_plan_test
