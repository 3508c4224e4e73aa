// MoE workloads: total and active parameter counts against the publishers' figures, DeepSeek-V3's
// latent attention derived by hand, the Hugging Face readers of Mixtral, Qwen3-MoE, DeepSeek-V3
// and GPT-OSS agreeing with the shipped shapes, and MoE fields stepcast does not model refused.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "stepcast/workload/workload.hpp"
#include "support/input_error_text.hpp"

namespace moe_workload_test {

namespace fs = std::filesystem;
using stepcast::workload::load_workload;
using stepcast::workload::Workload;

namespace {

const fs::path kSource = STEPCAST_SOURCE_DIR;

/// A published figure is printed to one unit of its last digit, rounded (Mistral: 46.70 ->
/// "46.7") or cut (Qwen: 3.35 -> "3.3"; DeepSeek: 37.55 -> "37"): a count matches it when it is
/// within 1%, or within what the printed digits can mean, [figure - unit/2, figure + unit).
bool matches_published(double count, double published, double unit) {
  if (std::fabs(count - published) <= 0.01 * published) return true;
  return count >= published - 0.5 * unit && count < published + unit;
}

}  // namespace

TEST_SUITE("workload.moe") {
  TEST_CASE("shipped MoE workloads: total parameters within 1% of the published figures") {
    // Figures and sources are in each file (published_parameters, published_source).
    struct Case {
      const char* file;
      double published;
    };
    for (const Case c : {Case{"mixtral-8x7b", 46.7e9}, Case{"mixtral-8x22b", 141e9}, Case{"qwen3-30b-a3b", 30.5e9},
                         Case{"qwen3-235b-a22b", 235e9}, Case{"gpt-oss-120b", 116.83e9}}) {
      CAPTURE(c.file);
      const Workload w = load_workload(kSource / "workloads" / (std::string(c.file) + ".json"));
      REQUIRE(w.shape->moe.has_value());
      CHECK(std::fabs(w.parameters - c.published) <= 0.01 * c.published);
    }
  }

  TEST_CASE(
      "shipped MoE workloads: active parameters match the publishers' figures, each counted as its publisher does") {
    // Mistral (mistral.ai/news/mixtral-of-experts: 12.9B; mixtral-8x22b: 39B) and Qwen (model
    // cards: 3.3B, 22B) count every embedding; OpenAI's gpt-oss model card (Table 1, 5.13B) counts
    // the unembedding but not the input embedding (its rows are looked up, not multiplied); the
    // DeepSeek-V3 report (section 4.2, 37B) counts the main model without its MTP module.
    struct Case {
      const char* file;
      double published;
      double unit;  // the last printed digit
      bool counts_input_embedding;
    };
    for (const Case c : {Case{"mixtral-8x7b", 12.9e9, 0.1e9, true}, Case{"mixtral-8x22b", 39e9, 1e9, true},
                         Case{"qwen3-30b-a3b", 3.3e9, 0.1e9, true}, Case{"qwen3-235b-a22b", 22e9, 1e9, true},
                         Case{"gpt-oss-120b", 5.13e9, 0.01e9, false}}) {
      CAPTURE(c.file);
      const Workload w = load_workload(kSource / "workloads" / (std::string(c.file) + ".json"));
      const auto& s = *w.shape;
      const double active =
          w.active_parameters - (c.counts_input_embedding ? 0.0 : static_cast<double>(s.vocab) * s.hidden);
      CAPTURE(active);
      CHECK(matches_published(active, c.published, c.unit));
    }
  }

  TEST_CASE("Mixtral 8x7B by hand: 46.70B total, 12.88B active") {
    // Attention: 2*4096*4096 + 2*4096*1024 = 41,943,040. Expert (SwiGLU): 3*4096*14336 =
    // 176,160,768. Router 4096*8 = 32,768. Norms 2*4096. Per layer: 41,943,040 + 8*176,160,768 +
    // 32,768 + 8,192 = 1,451,270,144; x32 = 46,440,644,608. Embedding and LM head 2*32000*4096 =
    // 262,144,000; final norm 4096. Total 46,702,792,704.
    // Active: 41,943,040 + 2*176,160,768 + 40,960 = 394,305,536 per layer; x32 = 12,617,777,152;
    // + 262,148,096 = 12,879,925,248.
    const Workload w = load_workload(kSource / "workloads/mixtral-8x7b.json");
    CHECK(w.parameters == doctest::Approx(46702792704.0).epsilon(1e-12));
    CHECK(w.active_parameters == doctest::Approx(12879925248.0).epsilon(1e-12));
  }

  TEST_CASE("DeepSeek-V3 latent attention and parameters derived by hand: 671.03B main model, 37.55B active") {
    // MLA per layer (DeepSeek-V2 report section 2.1; h=7168, 128 heads, q_lora 1536, kv_lora 512,
    // nope 128, rope 64, v 128):
    //   q_a  7168 x 1536            = 11,010,048   + q_a norm 1,536
    //   q_b  1536 x 128*(128+64)    = 37,748,736
    //   kv_a 7168 x (512+64)        =  4,128,768   + kv_a norm 512
    //   kv_b 512 x 128*(128+128)    = 16,777,216
    //   o    128*128 x 7168         = 117,440,512
    //   sum                         = 187,107,328
    const Workload w = load_workload(kSource / "workloads/deepseek-v3.json");
    const auto& s = *w.shape;
    CHECK(stepcast::workload::attention_parameter_count(s) == doctest::Approx(187107328.0).epsilon(1e-12));
    // Expert: 3 x 7168 x 2048 = 44,040,192. Router 256 x 7168 = 1,835,008.
    CHECK(stepcast::workload::expert_parameter_count(s) == doctest::Approx(44040192.0).epsilon(1e-12));
    // Dense layer (3 of them): 187,107,328 + 3*7168*18432 (396,361,728) + 2*7168 = 583,483,392.
    // MoE layer (58): 187,107,328 + 1,835,008 + (1 shared + 256 routed) x 44,040,192 + 14,336
    //   = 11,507,286,016; active: 187,107,328 + 1,835,008 + 9 x 44,040,192 + 14,336 = 585,318,400.
    // Embedding + head 2 x 129,280 x 7168 = 1,853,358,080; final norm 7168.
    // Main model: 3*583,483,392 + 58*11,507,286,016 + 1,853,365,248 = 671,026,404,352 (the
    // report's 671B); active 3*583,483,392 + 58*585,318,400 + 1,853,365,248 = 37,552,282,624.
    // The MTP module: one MoE block + two norms (2*7168) + the 2h x h projection (102,760,448)
    // = 11,610,060,800.
    CHECK(w.parameters == doctest::Approx(671026404352.0 + 11610060800.0).epsilon(1e-12));
    auto main_model = s;
    main_model.mtp_layers = 0;
    CHECK(stepcast::workload::parameter_count(main_model) == doctest::Approx(671026404352.0).epsilon(1e-12));
    const double active = stepcast::workload::active_parameter_count(main_model);
    CHECK(active == doctest::Approx(37552282624.0).epsilon(1e-12));
    // The report prints 671B and 37B: the total within 0.01%, the active count 1.5% above the
    // printed "37", inside what the cut digits can mean.
    CHECK(std::fabs(stepcast::workload::parameter_count(main_model) - 671e9) <= 0.01 * 671e9);
    CHECK(matches_published(active, 37e9, 1e9));
  }

  TEST_CASE(
      "what the published active counts count: Qwen's include the embeddings, DeepSeek-V3's 37B is two printed "
      "digits") {
    // Qwen3-30B-A3B's model card gives "30.5B in total and 3.3B activated" and, apart, "Number of
    // Parameters (Non-Embedding): 29.9B". By hand (h 2048, 32 heads and 4 kv heads of 128, 128
    // experts of 768, top-8, vocab 151,936, untied): attention 2*2048*4096 + 2*2048*512 =
    // 18,874,368, q/k norms 256, layer norms 4,096, router 2048*128 = 262,144, expert
    // 3*2048*768 = 4,718,592. Per layer total 18,874,368 + 256 + 4,096 + 262,144 + 128*4,718,592
    // = 623,120,640 (x48 = 29,909,790,720); active 18,874,368 + 256 + 4,096 + 262,144 +
    // 8*4,718,592 = 56,889,600 (x48 = 2,730,700,800). Embedding and head 2*151,936*2048 =
    // 622,329,856; final norm 2,048.
    const Workload qwen = load_workload(kSource / "workloads/qwen3-30b-a3b.json");
    const double qwen_embeddings = 2.0 * 151936.0 * 2048.0;
    CHECK(qwen.parameters == doctest::Approx(29909790720.0 + qwen_embeddings + 2048.0).epsilon(1e-12));
    CHECK(qwen.active_parameters == doctest::Approx(2730700800.0 + qwen_embeddings + 2048.0).epsilon(1e-12));
    // Without the embeddings the total is the card's non-embedding 29.9B (29,909,792,768): the
    // card's counts include them, so its 3.3B does too. The count with them, 3,353,032,704, is
    // 1.6% above "3.3" and what the card's one decimal shows when cut (3.35 -> 3.3); without the
    // input embedding (3.04B) or without both (2.73B) it would be 7.8% or 17% below.
    CHECK(std::fabs(qwen.parameters - qwen_embeddings - 29.9e9) <= 0.001 * 29.9e9);
    CHECK(std::floor(qwen.active_parameters / 1e8) == 33.0);
    // The DeepSeek-V3 report (section 4.2) says only "37B activated for each token" and does not
    // say what it counts. Its main model, by hand above: 37,552,282,624 with both embeddings
    // (+1.49%), 36,625,603,584 without the input embedding's 129,280 x 7168 = 926,679,040 rows
    // (-1.01%), 35,698,924,544 without the output head too (-3.5%). No count lands within 1% of
    // 37B: the printed figure has two digits, and stepcast keeps the count of every parameter a
    // token passes through, as Qwen's and Mistral's figures do.
    const Workload deepseek = load_workload(kSource / "workloads/deepseek-v3.json");
    auto main_model = *deepseek.shape;
    main_model.mtp_layers = 0;
    const double active = stepcast::workload::active_parameter_count(main_model);
    const double embedding = 129280.0 * 7168.0;
    CHECK(active / 37e9 - 1.0 == doctest::Approx(0.0149).epsilon(0.01));
    CHECK((active - embedding) / 37e9 - 1.0 == doctest::Approx(-0.0101).epsilon(0.01));
    CHECK(std::floor(active / 1e9) == 37.0);
  }

  TEST_CASE("Hugging Face configs of Mixtral, Qwen3-MoE, DeepSeek-V3 and GPT-OSS read as the shipped shapes") {
    for (const char* name : {"mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3", "gpt-oss-120b"}) {
      CAPTURE(name);
      const Workload hf = load_workload(kSource / "tests/workload/data" / name / "config.json");
      const Workload shipped = load_workload(kSource / "workloads" / (std::string(name) + ".json"));
      CHECK(hf.parameters == doctest::Approx(shipped.parameters).epsilon(1e-12));
      CHECK(hf.active_parameters == doctest::Approx(shipped.active_parameters).epsilon(1e-12));
      CHECK(hf.shape->moe_layer_count() == shipped.shape->moe_layer_count());
      CHECK(hf.shape->sliding_layers == shipped.shape->sliding_layers);
      CHECK(hf.shape->mtp_layers == shipped.shape->mtp_layers);
    }
  }

  TEST_CASE("DeepSeek's moe_layer_freq counts from layer 0 after the dense ones, Qwen's decoder_sparse_step from 1") {
    stepcast::workload::MoeShape deepseek;
    deepseek.first_dense_layers = 1;
    deepseek.layer_step = 2;
    deepseek.step_from_one = false;  // modeling_deepseek.py: layer_idx % moe_layer_freq == 0
    CHECK_FALSE(deepseek.is_moe_layer(0));
    CHECK(deepseek.is_moe_layer(2));
    CHECK_FALSE(deepseek.is_moe_layer(3));
    stepcast::workload::MoeShape qwen;
    qwen.layer_step = 2;  // modeling_qwen2_moe.py: (layer_idx + 1) % decoder_sparse_step == 0
    CHECK_FALSE(qwen.is_moe_layer(0));
    CHECK(qwen.is_moe_layer(1));
  }

  TEST_CASE("an MoE or attention field stepcast does not model is refused by name, never priced as dense") {
    const std::string text = stepcast::test::input_error_text(
        [&] { (void)load_workload(kSource / "tests/bad-inputs/moe/unknown_moe_field/config.json"); });
    CHECK(text.find("/moe_num_experts_in_group") != std::string::npos);
    CHECK(text.find("\"moe_num_experts_in_group\" is an MoE or attention setting stepcast does not model") !=
          std::string::npos);
  }
}

}  // namespace moe_workload_test
