// Hugging Face families read as transformers builds them: the configuration class's defaults
// for keys a config leaves out, each family's layout (norms, biases, tying, windows), counts
// derived by hand, and what is not a decoder-only transformer refused by its model_type.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "stepcast/workload/workload.hpp"
#include "support/input_error_text.hpp"

namespace hf_families_test {

using stepcast::workload::load_workload;
using stepcast::workload::Workload;

namespace {

const std::filesystem::path kData = std::filesystem::path(STEPCAST_SOURCE_DIR) / "tests/workload/data";

/// A config.json holding `text`, in a scratch folder of its own.
std::filesystem::path config_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "stepcast_hf_families" / name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << text;
  return dir / "config.json";
}

Workload read(const std::string& name, const std::string& text) { return load_workload(config_file(name, text)); }

std::string error_of(const std::string& name, const std::string& text) {
  return stepcast::test::input_error_text([&] { (void)read(name, text); });
}

}  // namespace

TEST_SUITE("workload.hf_families") {
  TEST_CASE("keys a config leaves out take its class's defaults: GPT-2's dropout 0.1, Mistral 7B's dims") {
    // GPT2Config: resid_pdrop = embd_pdrop = attn_pdrop = 0.1, n_inner None (4h), n_positions 1024.
    const auto gpt2 = read("gpt2-bare", R"({"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12})");
    CHECK(gpt2.shape->dropout);
    CHECK(gpt2.shape->ffn_hidden == 4 * 768);
    CHECK(gpt2.parameters == 124439808.0);  // the published config's count (workload_test.cpp by hand)
    // Written as 0, GPT-2 trains without dropout.
    CHECK_FALSE(
        read("gpt2-no-dropout", R"({"model_type": "gpt2", "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0})")
            .shape->dropout);
    // MistralConfig's defaults are Mistral 7B's shape: the bare config counts as the published one.
    const auto mistral = read("mistral-bare", R"({"model_type": "mistral"})");
    CHECK(mistral.parameters == load_workload(kData / "mistral-7b/config.json").parameters);
    CHECK(mistral.shape->sliding_layers == 32);  // sliding_window 4096 on every layer
    // LlamaConfig's attention_dropout is 0.0: no dropout kernels for a config that does not say.
    CHECK_FALSE(read("llama-bare", R"({"model_type": "llama"})").shape->dropout);
  }

  TEST_CASE("Falcon-7B by hand: multi-query QKV, one LayerNorm per parallel block, tied head: 6,921,720,704") {
    // qkv 4544 x (4544 + 2 x 64) = 21,229,568; dense 4544^2 = 20,647,936; MLP 2 x 4544 x 18176 =
    // 165,183,488; one LayerNorm 9,088: 207,070,080 x 32 = 6,626,242,560; embedding 65024 x 4544 =
    // 295,469,056, tied; final LayerNorm 9,088.
    const auto w = load_workload(kData / "falcon-7b/config.json");
    CHECK(w.shape->kv_heads == 1);
    CHECK(w.shape->block_norms == 1);
    CHECK(w.parameters == 6921720704.0);
  }

  TEST_CASE("Falcon-40B by hand: the new decoder architecture's 8 key/value groups and two LayerNorms") {
    // qkv 8192 x (128 + 2 x 8) x 64 = 75,497,472; dense 67,108,864; MLP 2 x 8192 x 32768 =
    // 536,870,912; ln_attn and ln_mlp 32,768: 679,510,016 x 60 = 40,770,600,960; embedding 65024 x
    // 8192 = 532,676,608; final 16,384: 41,303,293,952.
    const auto w = load_workload(kData / "falcon-40b/config.json");
    CHECK(w.shape->kv_heads == 8);
    CHECK(w.shape->block_norms == 2);
    CHECK(w.parameters == 41303293952.0);
  }

  TEST_CASE("Phi-2 by hand: parallel block behind one LayerNorm, biases everywhere and on the LM head") {
    // Per block: 4 x 2560^2 + 4 x 2560 (attention) + 2 x 2560 x 10240 + 10240 + 2560 (MLP) + 5120
    // (one LayerNorm) = 78,671,360, x 32 = 2,517,483,520; embedding and untied head 2 x 51200 x
    // 2560 = 262,144,000; head bias 51,200; final LayerNorm 5,120: 2,779,683,840. Read as Llama
    // (gated MLP, two RMSNorms, no biases) it would be 3.62B.
    const auto w = load_workload(kData / "phi-2/config.json");
    CHECK(w.parameters == 2779683840.0);
    CHECK_FALSE(w.shape->gated_mlp);
    CHECK(w.shape->dropout);  // resid_pdrop 0.1
  }

  TEST_CASE(
      "Gemma 2 9B by hand: four RMSNorms per block, 256-wide heads, tied embeddings, every other layer windowed") {
    // Per block: Q and O 2 x 3584 x 4096 = 29,360,128; K and V 2 x 3584 x 2048 = 14,680,064; MLP 3 x
    // 3584 x 14336 = 154,140,672; four norms 14,336: 198,195,200 x 42 = 8,324,198,400; final norm
    // 3,584 (8,324,201,984 non-embedding, as Gemma's Table 2); embedding 256000 x 3584, tied.
    const auto w = load_workload(kData / "gemma-2-9b/config.json");
    CHECK(w.parameters == 8324201984.0 + 256000.0 * 3584.0);
    CHECK(w.shape->sliding_window == 4096);
    CHECK(w.shape->sliding_layers == 21);  // layers 0, 2, ..., 40 (Gemma2Config.layer_types)
  }

  TEST_CASE("Gemma 3 1B: five sliding layers to one full (sliding_window_pattern 6), query and key norms") {
    const auto w = load_workload(kData / "gemma-3-1b/config.json");
    CHECK(w.shape->sliding_window == 512);
    CHECK(w.shape->sliding_layers == 26 - 4);  // layers 5, 11, 17, 23 attend fully
    CHECK(w.shape->qk_norm);
    CHECK(w.shape->block_norms == 4);
  }

  TEST_CASE("Qwen2 biases Q, K and V only, use_sliding_window windows the layers from max_window_layers on") {
    // Qwen2.5-0.5B by hand: attention 2 x 896^2 + 2 x 896 x 128 + 896 + 2 x 128 (Q, K, V biases) =
    // 1,836,160; MLP 3 x 896 x 4864 = 13,074,432; norms 1,792: 14,912,384 x 24 = 357,897,216;
    // embedding 151936 x 896 = 136,134,656, tied; final norm 896: 494,032,768.
    const auto w = load_workload(kData / "qwen2.5-0.5b/config.json");
    CHECK(w.parameters == 494032768.0);
    CHECK(w.shape->sliding_layers == 0);  // use_sliding_window false
    const auto windowed = read("qwen2-windowed",
                               R"({"model_type": "qwen2", "num_hidden_layers": 24, "use_sliding_window": true,
                                   "sliding_window": 4096, "max_window_layers": 20})");
    CHECK(windowed.shape->sliding_layers == 4);
    CHECK(windowed.shape->sliding_window == 4096);
  }

  TEST_CASE("GPT-J by hand: biases on the MLP and the LM head only, one LayerNorm per parallel block") {
    // Per block: 4 x 4096^2 (attention) + 2 x 4096 x 16384 + 16384 + 4096 (MLP) + 8192 (ln_1) =
    // 201,355,264, x 28 = 5,637,947,392; embedding and head 2 x 50400 x 4096 = 412,876,800; head
    // bias 50,400; ln_f 8,192: 6,050,882,784.
    CHECK(load_workload(kData / "gpt-j-6b/config.json").parameters == 6050882784.0);
  }

  TEST_CASE("OPT by hand: 2 extra position rows, BLOOM: ALiBi and a LayerNorm on the embeddings") {
    // OPT-125m: per block 4 x 768^2 + 4 x 768 + 2 x 768 x 3072 + 3072 + 768 + 4 x 768 = 7,087,872,
    // x 12 = 85,054,464; embedding 50272 x 768 = 38,608,896 (tied); positions (2048 + 2) x 768 =
    // 1,574,400; final LayerNorm 1,536: 125,239,296.
    CHECK(load_workload(kData / "opt-125m/config.json").parameters == 125239296.0);
    // BLOOM-560m: per block 4 x 1024^2 + 4 x 1024 + 2 x 1024 x 4096 + 4096 + 1024 + 4 x 1024 =
    // 12,596,224, x 24 = 302,309,376; embedding 250880 x 1024 = 256,901,120 (tied); embedding
    // LayerNorm and final LayerNorm 2 x 2048: 559,214,592 (the model card's figure).
    const auto bloom = load_workload(kData / "bloom-560m/config.json");
    CHECK(bloom.parameters == 559214592.0);
    CHECK_FALSE(bloom.shape->rotary);
    CHECK_FALSE(bloom.shape->learned_positions);
  }

  TEST_CASE("a config without model_type is read by its architectures entry") {
    const auto w = read("mistral-by-class", R"({"architectures": ["MistralForCausalLM"]})");
    CHECK(w.architecture.starts_with("mistral as transformers' MistralConfig builds it"));
    CHECK(w.name == "mistral");
  }

  TEST_CASE("encoders, encoder-decoders, state-space and unknown families are refused naming the model_type") {
    CHECK(error_of("bert", R"({"model_type": "bert", "hidden_size": 768})")
              .ends_with(":/model_type: model_type \"bert\" is an encoder-only model, not a decoder-only transformer "
                         "stepcast models"));
    CHECK(error_of("t5", R"({"model_type": "t5", "d_model": 512})")
              .ends_with("model_type \"t5\" is an encoder-decoder model, not a decoder-only transformer stepcast "
                         "models"));
    CHECK(error_of("mamba", R"({"model_type": "mamba"})")
              .ends_with("model_type \"mamba\" is a state-space (or hybrid recurrent) model, not a decoder-only "
                         "transformer stepcast models"));
    const std::string unknown = error_of("mpt", R"({"model_type": "mpt"})");
    CHECK(unknown.find("model_type \"mpt\" is not a family stepcast reads (it reads llama, mistral,") !=
          std::string::npos);
    CHECK(error_of("bert-class", R"({"architectures": ["BertForMaskedLM"]})")
              .find("\"BertForMaskedLM\" is not a model class stepcast reads") != std::string::npos);
  }

  TEST_CASE("OPT-350m's projected embeddings are refused by name, not priced as a plain OPT") {
    CHECK(error_of("opt-350m", R"({"model_type": "opt", "hidden_size": 1024, "word_embed_proj_dim": 512})")
              .ends_with(":/word_embed_proj_dim: 512 differs from hidden_size 1024: OPT's projected embeddings "
                         "(project_in/project_out) are not modelled"));
  }
}

}  // namespace hf_families_test
