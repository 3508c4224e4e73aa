// Published Hugging Face configs read as their architectures: each config.json under
// tests/workload/data is the model's own file from the Hub, and its parameter count must come
// within 1% of the figure its publisher states (cited beside each). A family priced as another
// (Phi-2 as Llama: 3.62B; Gemma 2 9B with two norms and untied embeddings: 10.16B) misses by far
// more than that.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "stepcast/workload/workload.hpp"

namespace hf_published_counts_test {

using stepcast::workload::load_workload;

namespace {

const std::filesystem::path kData = std::filesystem::path(STEPCAST_SOURCE_DIR) / "tests/workload/data";

struct Published {
  const char* folder;
  const char* model_type;
  double total;        ///< parameters the publisher states
  const char* source;  ///< where it states them
};

// clang-format off
const std::vector<Published> kPublished = {
  {"llama-2-7b", "llama", 6.74e9, "Hugging Face meta-llama/Llama-2-7b-hf, safetensors parameter count 6.74B"},
  {"llama-3-8b", "llama", 8.03e9, "Hugging Face meta-llama/Meta-Llama-3-8B, safetensors parameter count 8.03B"},
  {"llama-3.2-1b", "llama", 1.23e9, "Meta, Llama 3.2 model card, model information table: 1B (1.23B)"},
  {"tinyllama-1.1b", "llama", 1.1e9, "Zhang et al. 2024, TinyLlama (arXiv:2401.02385): a 1.1B language model"},
  {"mistral-7b", "mistral", 7.3e9, "Mistral AI, \"Mistral 7B\" announcement (2023-09-27): a 7.3B parameter model"},
  {"mixtral-8x7b", "mixtral", 46.7e9, "Mistral AI, \"Mixtral of experts\" (2023-12-11): 46.7B total parameters"},
  {"qwen2.5-0.5b", "qwen2", 0.49e9, "Qwen/Qwen2.5-0.5B model card: Number of Parameters 0.49B"},
  {"qwen2.5-7b", "qwen2", 7.61e9, "Qwen/Qwen2.5-7B model card: Number of Parameters 7.61B"},
  {"qwen3-8b", "qwen3", 8.2e9, "Qwen/Qwen3-8B model card: Number of Parameters 8.2B"},
  {"qwen3-30b-a3b", "qwen3_moe", 30.5e9, "Qwen/Qwen3-30B-A3B model card: 30.5B in total"},
  {"qwen1.5-moe-a2.7b", "qwen2_moe", 14.3e9, "Qwen team, \"Qwen1.5-MoE\" blog (2024-03-28): 14.3B parameters in total"},
  {"gemma-2b", "gemma", 524550144.0 + 1981884416.0,
   "Gemma Team 2024 (arXiv:2403.08295), Table 2: 524,550,144 embedding + 1,981,884,416 non-embedding"},
  {"gemma-7b", "gemma", 786825216.0 + 7751248896.0,
   "Gemma Team 2024 (arXiv:2403.08295), Table 2: 786,825,216 embedding + 7,751,248,896 non-embedding"},
  {"gemma-2-2b", "gemma2", 590118912.0 + 2024517888.0,
   "Gemma Team 2024 (arXiv:2408.00118), Table 2: 590,118,912 embedding + 2,024,517,888 non-embedding"},
  {"gemma-2-9b", "gemma2", 917962752.0 + 8324201984.0,
   "Gemma Team 2024 (arXiv:2408.00118), Table 2: 917,962,752 embedding + 8,324,201,984 non-embedding"},
  {"gemma-3-1b", "gemma3_text", 302e6 + 698e6,
   "Gemma Team 2025 (arXiv:2503.19786), Table 1: 1B, 302M embedding + 698M non-embedding, no vision encoder"},
  {"phi-2", "phi", 2.78e9, "Hugging Face microsoft/phi-2, safetensors parameter count 2.78B"},
  {"phi-3-mini", "phi3", 3.8e9, "Abdin et al. 2024 (arXiv:2404.14219), abstract: phi-3-mini, 3.8 billion parameters"},
  {"phi-3-medium", "phi3", 14e9, "Abdin et al. 2024 (arXiv:2404.14219), abstract: phi-3-medium, 14B"},
  {"gpt2", "gpt2", 124e6, "Hugging Face openai-community/gpt2, safetensors parameter count 124M"},
  {"gpt-j-6b", "gptj", 6053381344.0, "EleutherAI/gpt-j-6b model card, hyperparameters: n_parameters 6,053,381,344"},
  {"pythia-160m", "gpt_neox", 162322944.0, "Biderman et al. 2023 (Pythia, arXiv:2304.01373), Table 1: 162,322,944"},
  {"gpt-neox-20b", "gpt_neox", 20554567680.0, "Black et al. 2022 (arXiv:2204.06745), GPT-NeoX-20B: 20,554,567,680"},
  {"opt-125m", "opt", 125e6, "Zhang et al. 2022 (OPT, arXiv:2205.01068), Table 1: 125M"},
  {"opt-6.7b", "opt", 6.7e9, "Zhang et al. 2022 (OPT, arXiv:2205.01068), Table 1: 6.7B"},
  {"bloom-560m", "bloom", 559214592.0, "bigscience/bloom-560m model card: 559,214,592 parameters"},
  {"bloom-7b1", "bloom", 7069016064.0, "bigscience/bloom-7b1 model card: 7,069,016,064 parameters"},
  {"deepseek-v2-lite", "deepseek_v2", 15.7e9, "DeepSeek-AI 2024 (arXiv:2405.04434), DeepSeek-V2-Lite: 15.7B total"},
  {"deepseek-v3", "deepseek_v3", 671e9 + 14e9,
   "deepseek-ai/DeepSeek-V3 model card: 671B main model weights and 14B of the multi-token-prediction module"},
  {"gpt-oss-20b", "gpt_oss", 20.91e9, "OpenAI 2025, gpt-oss model card (arXiv:2508.10925), Table 1: 20.91B total"},
  {"gpt-oss-120b", "gpt_oss", 116.83e9, "OpenAI 2025, gpt-oss model card (arXiv:2508.10925), Table 1: 116.83B total"},
};
// clang-format on

}  // namespace

TEST_SUITE("workload.hf_published") {
  TEST_CASE("published Hugging Face configs of 20 families' models count within 1% of their publishers' figures") {
    REQUIRE(kPublished.size() >= 20);
    for (const Published& p : kPublished) {
      CAPTURE(p.folder);
      CAPTURE(p.source);
      const auto w = load_workload(kData / p.folder / "config.json");
      REQUIRE(w.shape.has_value());
      CHECK(w.architecture.starts_with(std::string(p.model_type) + " as transformers' "));
      CHECK(std::fabs(w.parameters / p.total - 1.0) <= 0.01);
    }
  }

  TEST_CASE("the table covers every family stepcast reads but Falcon, whose publisher states no exact count") {
    std::vector<std::string> types;
    for (const Published& p : kPublished) types.emplace_back(p.model_type);
    for (const char* type : {"llama",    "mistral", "mixtral",     "qwen2",       "qwen2_moe",   "qwen3",  "qwen3_moe",
                             "gemma",    "gemma2",  "gemma3_text", "phi",         "phi3",        "gpt2",   "gptj",
                             "gpt_neox", "opt",     "bloom",       "deepseek_v2", "deepseek_v3", "gpt_oss"}) {
      CAPTURE(type);
      CHECK(std::find(types.begin(), types.end(), type) != types.end());
    }
  }

  TEST_CASE("the active counts of the MoE configs: Qwen1.5-MoE 2.7B and gpt-oss-20b 3.61B as each counts them") {
    // Qwen's blog: "2.7B activated parameters" with the embeddings; by hand per block attention
    // 4 x 2048^2 + 3 x 2048 (Q, K, V biases) = 16,783,360, router 2048 x 60 = 122,880, shared
    // expert 3 x 2048 x 5632 + its gate 2048 = 34,605,056, four routed experts 4 x 3 x 2048 x
    // 1408 = 34,603,008, norms 4096: 86,118,400 x 24 = 2,066,841,600; embeddings 2 x 151936 x
    // 2048 = 622,329,856; final norm 2048: 2,689,173,504.
    const auto qwen = load_workload(kData / "qwen1.5-moe-a2.7b/config.json");
    CHECK(qwen.active_parameters == 2689173504.0);
    CHECK(std::fabs(qwen.active_parameters / 2.7e9 - 1.0) <= 0.01);
    // OpenAI's model card counts the unembedding but not the input embedding (201,088 x 2,880).
    const auto oss = load_workload(kData / "gpt-oss-20b/config.json");
    CHECK(std::fabs((oss.active_parameters - 201088.0 * 2880.0) / 3.61e9 - 1.0) <= 0.01);
  }
  TEST_CASE("group-limited routing as the configs state it: DeepSeek-V3 top-8 from 4 of 8 groups, V2-Lite greedy") {
    // DeepSeek-V3's config.json: n_group 8, topk_group 4, topk_method noaux_tc (its report,
    // section 2.1.2: each token to at most 4 nodes). V2-Lite's: topk_method greedy, from all experts.
    const auto v3 = load_workload(kData / "deepseek-v3/config.json");
    REQUIRE(v3.shape->moe.has_value());
    CHECK(v3.shape->moe->router_groups == 8);
    CHECK(v3.shape->moe->router_group_topk == 4);
    const auto lite = load_workload(kData / "deepseek-v2-lite/config.json");
    REQUIRE(lite.shape->moe.has_value());
    CHECK(lite.shape->moe->router_groups == 1);
    CHECK(lite.shape->moe->router_group_topk == 1);
  }
  TEST_CASE("GPT-OSS's experts as its config states them: biased, their GLU inputs clamped at swiglu_limit 7.0") {
    // gpt-oss-120b's config.json: "swiglu_limit": 7.0 (modeling_gpt_oss.py clamps the gate at
    // most 7 and the linear half within +-7); its model card: biases on the router and the experts.
    const auto oss = load_workload(kData / "gpt-oss-120b/config.json");
    REQUIRE(oss.shape->moe.has_value());
    CHECK(oss.shape->moe->expert_biases);
    CHECK(oss.shape->moe->glu_clamp == 7.0);
    // DeepSeek-V3's config has no swiglu_limit: nothing clamped.
    CHECK(load_workload(kData / "deepseek-v3/config.json").shape->moe->glu_clamp == 0.0);
  }
}

}  // namespace hf_published_counts_test
