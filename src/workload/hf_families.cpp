// The Hugging Face families stepcast reads. Each entry copies its configuration class's defaults
// (transformers' src/transformers/models/<family>/configuration_<family>.py) for the keys read
// here, and its reader builds the layout of the family's modeling_<family>.py: which linear layers
// carry biases, how many norms a block holds, whether the LM head is tied, how positions enter.
// The MoE, latent-attention, head-dim and window fields are hf_extensions.cpp's.
#include "hf_families.hpp"

#include "hf_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace stepcast::workload {

int HfKeys::count(std::string_view key) const {
  const JsonReader v = r_.at(key);
  const std::int64_t n = v.count();
  if (n > 1 << 30) v.fail(fmt::format("too large, got {}", n));
  return static_cast<int>(n);
}

int HfKeys::count_or(std::string_view key, int fallback) const { return given(key) ? count(key) : fallback; }

bool HfKeys::flag(std::string_view key) const { return r_.at(key).boolean(); }

bool HfKeys::positive(std::string_view key) const { return given(key) && r_.at(key).number() > 0.0; }

bool HfKeys::given(std::string_view key) const {
  const auto found = r_.find(key);
  return found && !found->json().is_null();
}

namespace {

/// The keys Llama and the families built on its code share (LlamaConfig's names): dims, GQA,
/// untied or tied embeddings, and no dropout unless attention_dropout says so.
void llama_dims(const HfKeys& k, TransformerShape& s) {
  s.layers = k.count("num_hidden_layers");
  s.hidden = k.count("hidden_size");
  s.heads = k.count("num_attention_heads");
  s.kv_heads = k.count_or("num_key_value_heads", s.heads);
  s.ffn_hidden = k.count("intermediate_size");
  s.vocab = k.count("vocab_size");
  s.tied_embeddings = k.flag("tie_word_embeddings");
  s.dropout = k.positive("attention_dropout");
  s.gated_mlp = true;  // SwiGLU (Llama, Mistral, Qwen, Phi-3) or GeGLU (Gemma): gate, up, down
  s.norm = Norm::kRmsNorm;
  s.rotary = true;
}

/// Llama (modeling_llama.py): attention_bias puts biases on Q, K, V and O, mlp_bias on the MLP.
void read_llama(const HfKeys& k, TransformerShape& s) {
  llama_dims(k, s);
  const bool attention = k.flag("attention_bias");
  const bool mlp = k.flag("mlp_bias");
  s.biases = attention && mlp;
  s.attention_biases = attention && !mlp;
  s.mlp_biases = mlp && !attention;
}

/// Mistral, Mixtral, Phi-3, DeepSeek-V2/V3: no biases anywhere.
void read_unbiased(const HfKeys& k, TransformerShape& s) { llama_dims(k, s); }

/// Qwen2 and Qwen2-MoE (modeling_qwen2.py): Q, K and V carry biases, O and the MLP do not.
void read_qwen2(const HfKeys& k, TransformerShape& s) {
  llama_dims(k, s);
  s.qkv_biases = true;
}

/// Qwen3 and Qwen3-MoE (modeling_qwen3.py): RMSNorm on each head's query and key; attention_bias
/// on Q, K, V and O.
void read_qwen3(const HfKeys& k, TransformerShape& s) {
  llama_dims(k, s);
  s.attention_biases = k.flag("attention_bias");
  s.qk_norm = true;
}

/// Gemma (modeling_gemma.py): GeGLU MLP, RMSNorm (1 + w, the same h gains), tied embeddings.
void read_gemma(const HfKeys& k, TransformerShape& s) {
  llama_dims(k, s);
  s.attention_biases = k.flag("attention_bias");
}

/// Gemma 2 (modeling_gemma2.py): four norms per block, before and after attention and the MLP.
void read_gemma2(const HfKeys& k, TransformerShape& s) {
  read_gemma(k, s);
  s.block_norms = 4;
}

/// Gemma 3 (modeling_gemma3.py): Gemma 2's four norms and RMSNorm on each head's query and key.
void read_gemma3(const HfKeys& k, TransformerShape& s) {
  read_gemma2(k, s);
  s.qk_norm = true;
}

/// GPT-OSS (modeling_gpt_oss.py): attention_bias on Q, K, V and O, one sink logit per head; its
/// experts and router biases are MoE fields (every block is an MoE block, so `biases` reaches
/// attention and the bias-gradient kernels only).
void read_gpt_oss(const HfKeys& k, TransformerShape& s) {
  llama_dims(k, s);
  s.biases = k.flag("attention_bias");
  s.attention_sinks = true;
}

/// NemotronH (modeling_nemotron_h.py; Nemotron-H and Nemotron 3): a hybrid stack whose layers are
/// each one RMSNorm and one mixer, by hybrid_override_pattern or its list form layers_block_type
/// (linear_attention M, full_attention *, mlp -, moe E): a Mamba-2 mixer of mamba_num_heads x
/// mamba_head_dim channels, attention without position embeddings, or a squared-ReLU MLP. The
/// routed experts are hf_extensions.cpp's.
void read_nemotron_h(const HfKeys& k, TransformerShape& s) {
  const JsonReader& r = k.reader();
  std::string pattern;
  if (const auto given = r.find("hybrid_override_pattern"); given && !given->json().is_null()) {
    pattern = given->string();
  } else if (const auto types = r.find("layers_block_type"); types && !types->json().is_null()) {
    for (const JsonReader& layer : types->elements()) {
      const std::string type = layer.string();
      const char letter = type == "linear_attention" ? 'M'
                          : type == "full_attention" ? '*'
                          : type == "mlp"            ? '-'
                          : type == "moe"            ? 'E'
                                                     : '?';
      if (letter == '?')
        layer.fail(fmt::format("unknown layer type \"{}\" (linear_attention, full_attention, mlp or moe)", type));
      pattern += letter;
    }
  } else {
    pattern = "ME*-";  // NemotronHConfig's layers_block_type when it is given neither
  }
  if (pattern.empty() || pattern.size() > (1u << 14))
    r.fail(fmt::format("a hybrid stack of {} layers", pattern.size()));
  if (k.flag("mamba_proj_bias")) r.at("mamba_proj_bias").fail("biases on the Mamba-2 projections are not modelled");
  MambaShape m;
  m.heads = k.count("mamba_num_heads");
  m.head_dim = k.count("mamba_head_dim");
  m.state = k.count("ssm_state_size");
  m.groups = k.count("n_groups");
  m.conv_kernel = k.count("conv_kernel");
  m.chunk = k.count("chunk_size");
  llama_dims(k, s);
  s.hybrid = HybridShape{pattern, m};
  s.layers = static_cast<int>(pattern.size());  // the pattern's, as NemotronHConfig.num_hidden_layers gives
  s.dropout = s.dropout || k.positive("hidden_dropout");
  s.gated_mlp = false;  // relu2: up and down projections only
  s.rotary = false;
  s.attention_biases = k.flag("attention_bias");
  s.mlp_biases = k.flag("mlp_bias");
}

/// Phi-1/1.5/2 (modeling_phi.py): attention and a GELU MLP in parallel behind one LayerNorm,
/// biases on every linear layer and the LM head, partial rotary; qk_layernorm adds a LayerNorm
/// on each head's query and key.
void read_phi(const HfKeys& k, TransformerShape& s) {
  llama_dims(k, s);
  s.gated_mlp = false;
  s.norm = Norm::kLayerNorm;
  s.biases = true;
  s.lm_head_bias = true;
  s.block_norms = 1;
  s.qk_norm = k.flag("qk_layernorm");
  s.dropout = k.positive("resid_pdrop") || k.positive("embd_pdrop") || k.positive("attention_dropout");
}

/// Phi-3 (modeling_phi3.py): Llama's layout with fused qkv and gate_up projections, no biases.
void read_phi3(const HfKeys& k, TransformerShape& s) {
  llama_dims(k, s);
  s.dropout = k.positive("resid_pdrop") || k.positive("embd_pdrop") || k.positive("attention_dropout");
}

/// GPT-2 (modeling_gpt2.py): learned positions (n_positions rows), biases, LayerNorm, a 4h GELU
/// MLP, the LM head tied to the token embedding.
void read_gpt2(const HfKeys& k, TransformerShape& s) {
  s.layers = k.count("n_layer");
  s.hidden = k.count("n_embd");
  s.heads = k.count("n_head");
  s.kv_heads = s.heads;
  s.ffn_hidden = k.count_or("n_inner", gpt_mlp_width(s.hidden));
  s.vocab = k.count("vocab_size");
  s.tied_embeddings = k.flag("tie_word_embeddings");
  s.biases = true;
  s.learned_positions = true;
  s.position_rows = k.count("n_positions");
  s.dropout = k.positive("resid_pdrop") || k.positive("embd_pdrop") || k.positive("attn_pdrop");
  s.norm = Norm::kLayerNorm;
}

/// GPT-J (modeling_gptj.py): attention and MLP in parallel behind one LayerNorm; Q, K, V and O
/// without biases, the MLP and the LM head with them; rotary on rotary_dim of each head.
void read_gptj(const HfKeys& k, TransformerShape& s) {
  s.layers = k.count("n_layer");
  s.hidden = k.count("n_embd");
  s.heads = k.count("n_head");
  s.kv_heads = s.heads;
  s.ffn_hidden = k.count_or("n_inner", gpt_mlp_width(s.hidden));
  s.vocab = k.count("vocab_size");
  s.tied_embeddings = k.flag("tie_word_embeddings");
  s.mlp_biases = true;
  s.lm_head_bias = true;
  s.block_norms = 1;
  s.rotary = true;
  s.dropout = k.positive("resid_pdrop") || k.positive("embd_pdrop") || k.positive("attn_pdrop");
  s.norm = Norm::kLayerNorm;
}

/// GPT-NeoX and Pythia (modeling_gpt_neox.py): LayerNorm, a 4h GELU MLP with biases, attention
/// biases unless attention_bias is false, partial rotary, untied embeddings.
void read_gpt_neox(const HfKeys& k, TransformerShape& s) {
  llama_dims(k, s);
  s.gated_mlp = false;
  s.norm = Norm::kLayerNorm;
  const bool attention = k.flag("attention_bias");
  s.biases = attention;
  s.mlp_biases = !attention;
  s.dropout = k.positive("attention_dropout") || k.positive("hidden_dropout");
}

/// OPT (modeling_opt.py): learned positions with 2 extra rows (OPTLearnedPositionalEmbedding's
/// offset), biases (enable_bias), LayerNorm, a ReLU MLP of ffn_dim, the LM head tied.
void read_opt(const HfKeys& k, TransformerShape& s) {
  s.layers = k.count("num_hidden_layers");
  s.hidden = k.count("hidden_size");
  s.heads = k.count("num_attention_heads");
  s.kv_heads = s.heads;
  s.ffn_hidden = k.count("ffn_dim");
  s.vocab = k.count("vocab_size");
  s.tied_embeddings = k.flag("tie_word_embeddings");
  s.biases = k.flag("enable_bias");
  s.learned_positions = true;
  s.position_rows = k.count("max_position_embeddings") + 2;
  s.dropout = k.positive("dropout") || k.positive("attention_dropout");
  s.norm = Norm::kLayerNorm;
  // OPT-350m projects a narrower embedding in and out and normalises after each sublayer.
  if (k.given("word_embed_proj_dim") && k.count("word_embed_proj_dim") != s.hidden) {
    k.reader()
        .at("word_embed_proj_dim")
        .fail(fmt::format(
            "{} differs from hidden_size {}: OPT's projected embeddings (project_in/project_out) are not modelled",
            k.count("word_embed_proj_dim"), s.hidden));
  }
  if (!k.flag("do_layer_norm_before") || k.flag("_remove_final_layer_norm")) {
    k.reader().at("do_layer_norm_before").fail("OPT with norms after each sublayer (no final norm) is not modelled");
  }
}

/// BLOOM (modeling_bloom.py): ALiBi (no position parameters), a LayerNorm on the token
/// embeddings, biases, LayerNorm, a 4h GELU MLP (fixed, n_inner unused), the LM head tied.
void read_bloom(const HfKeys& k, TransformerShape& s) {
  s.layers = k.count("n_layer");
  s.hidden = k.count("hidden_size");
  s.heads = k.count("n_head");
  s.kv_heads = s.heads;
  s.ffn_hidden = gpt_mlp_width(s.hidden);
  s.vocab = k.count("vocab_size");
  s.tied_embeddings = k.flag("tie_word_embeddings");
  s.biases = true;
  s.embedding_norm = true;
  s.dropout = k.positive("hidden_dropout") || k.positive("attention_dropout");
  s.norm = Norm::kLayerNorm;
}

/// Falcon (modeling_falcon.py): one fused QKV projection whose key/value heads are
/// num_kv_heads under new_decoder_architecture, 1 under multi_query, else every head; attention
/// and a 4h GELU MLP in parallel behind one LayerNorm (two, ln_attn and ln_mlp, in the new
/// architecture or without parallel_attn); `bias` on every linear layer; rotary unless ALiBi.
void read_falcon(const HfKeys& k, TransformerShape& s) {
  s.layers = k.count("num_hidden_layers");
  s.hidden = k.count("hidden_size");
  s.heads = k.count("num_attention_heads");
  const bool new_architecture = k.flag("new_decoder_architecture");
  s.kv_heads = new_architecture ? k.count_or("num_kv_heads", s.heads) : k.flag("multi_query") ? 1 : s.heads;
  s.ffn_hidden = k.count_or("ffn_hidden_size", gpt_mlp_width(s.hidden));
  s.vocab = k.count("vocab_size");
  s.tied_embeddings = k.flag("tie_word_embeddings");
  s.biases = k.flag("bias");
  s.rotary = !k.flag("alibi");
  s.norm = Norm::kLayerNorm;
  const int parallel_norms = k.count_or("num_ln_in_parallel_attn", new_architecture ? 2 : 1);
  s.block_norms = k.flag("parallel_attn") ? parallel_norms : 2;
  s.dropout = k.positive("hidden_dropout") || k.positive("attention_dropout");
}

// The classes' defaults (configuration_<family>.py, __init__ signatures), for the keys read above
// and in hf_extensions.cpp. null is the class's None, resolved by the reader's rule for it.
constexpr std::string_view kLlamaDefaults = R"({"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": null, "head_dim": null,
  "max_position_embeddings": 2048, "tie_word_embeddings": false, "attention_bias": false, "mlp_bias": false,
  "attention_dropout": 0.0})";
constexpr std::string_view kMistralDefaults = R"({"vocab_size": 32000, "hidden_size": 4096,
  "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
  "head_dim": null, "max_position_embeddings": 131072, "tie_word_embeddings": false, "sliding_window": 4096,
  "attention_dropout": 0.0})";
constexpr std::string_view kMixtralDefaults = R"({"vocab_size": 32000, "hidden_size": 4096,
  "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
  "head_dim": null, "max_position_embeddings": 131072, "tie_word_embeddings": false, "sliding_window": null,
  "num_local_experts": 8, "num_experts_per_tok": 2, "attention_dropout": 0.0})";
constexpr std::string_view kQwen2Defaults = R"({"vocab_size": 151936, "hidden_size": 4096,
  "intermediate_size": 22016, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
  "max_position_embeddings": 32768, "tie_word_embeddings": false, "use_sliding_window": false,
  "sliding_window": 4096, "max_window_layers": 28, "attention_dropout": 0.0})";
constexpr std::string_view kQwen2MoeDefaults = R"({"vocab_size": 151936, "hidden_size": 2048,
  "intermediate_size": 5632, "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16,
  "max_position_embeddings": 32768, "tie_word_embeddings": false, "use_sliding_window": false,
  "sliding_window": 4096, "max_window_layers": 28, "attention_dropout": 0.0, "decoder_sparse_step": 1,
  "moe_intermediate_size": 1408, "shared_expert_intermediate_size": 5632, "num_experts_per_tok": 4,
  "num_experts": 60, "mlp_only_layers": null})";
constexpr std::string_view kQwen3Defaults = R"({"vocab_size": 151936, "hidden_size": 4096,
  "intermediate_size": 22016, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
  "head_dim": 128, "max_position_embeddings": 32768, "tie_word_embeddings": false, "attention_bias": false,
  "use_sliding_window": false, "sliding_window": 4096, "max_window_layers": 28, "attention_dropout": 0.0})";
// Qwen3MoeConfig has no head_dim of its own: the attention takes hidden / heads without one.
constexpr std::string_view kQwen3MoeDefaults = R"({"vocab_size": 151936, "hidden_size": 2048,
  "intermediate_size": 6144, "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 4,
  "max_position_embeddings": 32768, "tie_word_embeddings": false, "attention_bias": false,
  "use_sliding_window": false, "sliding_window": 4096, "max_window_layers": 0, "attention_dropout": 0.0,
  "decoder_sparse_step": 1, "moe_intermediate_size": 768, "num_experts_per_tok": 8, "num_experts": 128,
  "mlp_only_layers": null})";
constexpr std::string_view kGemmaDefaults = R"({"vocab_size": 256000, "hidden_size": 3072,
  "intermediate_size": 24576, "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 16,
  "head_dim": 256, "max_position_embeddings": 8192, "tie_word_embeddings": true, "attention_bias": false,
  "attention_dropout": 0.0})";
constexpr std::string_view kGemma2Defaults = R"({"vocab_size": 256000, "hidden_size": 2304,
  "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
  "head_dim": 256, "max_position_embeddings": 8192, "tie_word_embeddings": true, "attention_bias": false,
  "attention_dropout": 0.0, "sliding_window": 4096})";
constexpr std::string_view kGemma3Defaults = R"({"vocab_size": 262208, "hidden_size": 2304,
  "intermediate_size": 9216, "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
  "head_dim": 256, "max_position_embeddings": 131072, "tie_word_embeddings": true, "attention_bias": false,
  "attention_dropout": 0.0, "sliding_window": 4096, "sliding_window_pattern": 6})";
constexpr std::string_view kPhiDefaults = R"({"vocab_size": 51200, "hidden_size": 2048, "intermediate_size": 8192,
  "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": null, "resid_pdrop": 0.0,
  "embd_pdrop": 0.0, "attention_dropout": 0.0, "max_position_embeddings": 2048, "tie_word_embeddings": false,
  "qk_layernorm": false})";
constexpr std::string_view kPhi3Defaults = R"({"vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192,
  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": null, "resid_pdrop": 0.0,
  "embd_pdrop": 0.0, "attention_dropout": 0.0, "max_position_embeddings": 4096, "tie_word_embeddings": false,
  "sliding_window": null})";
constexpr std::string_view kGpt2Defaults = R"({"vocab_size": 50257, "n_positions": 1024, "n_embd": 768,
  "n_layer": 12, "n_head": 12, "n_inner": null, "resid_pdrop": 0.1, "embd_pdrop": 0.1, "attn_pdrop": 0.1,
  "tie_word_embeddings": true})";
constexpr std::string_view kGptjDefaults = R"({"vocab_size": 50400, "n_positions": 2048, "n_embd": 4096,
  "n_layer": 28, "n_head": 16, "n_inner": null, "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0,
  "tie_word_embeddings": false})";
constexpr std::string_view kGptNeoxDefaults = R"({"vocab_size": 50432, "hidden_size": 6144,
  "num_hidden_layers": 44, "num_attention_heads": 64, "intermediate_size": 24576, "attention_dropout": 0.0,
  "hidden_dropout": 0.0, "max_position_embeddings": 2048, "tie_word_embeddings": false, "attention_bias": true})";
constexpr std::string_view kOptDefaults = R"({"vocab_size": 50272, "max_position_embeddings": 2048,
  "num_hidden_layers": 12, "num_attention_heads": 12, "ffn_dim": 3072, "hidden_size": 768, "dropout": 0.1,
  "attention_dropout": 0.0, "do_layer_norm_before": true, "_remove_final_layer_norm": false,
  "word_embed_proj_dim": null, "enable_bias": true, "tie_word_embeddings": true})";
constexpr std::string_view kBloomDefaults = R"({"vocab_size": 250880, "hidden_size": 64, "n_layer": 2,
  "n_head": 8, "hidden_dropout": 0.0, "attention_dropout": 0.0, "tie_word_embeddings": true})";
constexpr std::string_view kFalconDefaults = R"({"vocab_size": 65024, "hidden_size": 4544,
  "num_hidden_layers": 32, "num_attention_heads": 71, "num_kv_heads": null, "alibi": false,
  "new_decoder_architecture": false, "multi_query": true, "parallel_attn": true, "bias": false,
  "max_position_embeddings": 2048, "ffn_hidden_size": null, "num_ln_in_parallel_attn": null,
  "hidden_dropout": 0.0, "attention_dropout": 0.0, "tie_word_embeddings": true})";
constexpr std::string_view kDeepseekV2Defaults = R"({"vocab_size": 102400, "hidden_size": 4096,
  "intermediate_size": 11008, "moe_intermediate_size": 1407, "num_hidden_layers": 30, "num_attention_heads": 32,
  "num_key_value_heads": 32, "n_shared_experts": null, "n_routed_experts": null, "num_experts_per_tok": null,
  "moe_layer_freq": 1, "first_k_dense_replace": 0, "q_lora_rank": 1536, "kv_lora_rank": 512,
  "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "max_position_embeddings": 2048,
  "tie_word_embeddings": false, "attention_dropout": 0.0})";
constexpr std::string_view kDeepseekV3Defaults = R"({"vocab_size": 129280, "hidden_size": 7168,
  "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61, "num_attention_heads": 128,
  "num_key_value_heads": 128, "n_shared_experts": 1, "n_routed_experts": 256, "num_experts_per_tok": 8,
  "first_k_dense_replace": 3, "n_group": 8, "topk_group": 4, "q_lora_rank": 1536, "kv_lora_rank": 512,
  "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128, "max_position_embeddings": 4096,
  "tie_word_embeddings": false, "attention_dropout": 0.0})";
constexpr std::string_view kGptOssDefaults = R"({"num_hidden_layers": 36, "num_local_experts": 128,
  "vocab_size": 201088, "hidden_size": 2880, "intermediate_size": 2880, "head_dim": 64, "num_attention_heads": 64,
  "num_key_value_heads": 8, "sliding_window": 128, "max_position_embeddings": 131072, "attention_bias": true,
  "num_experts_per_tok": 4, "tie_word_embeddings": false, "attention_dropout": 0.0})";

constexpr std::string_view kNemotronHDefaults = R"({"vocab_size": 131072, "hidden_size": 4096,
  "layers_block_type": null, "num_hidden_layers": 4, "tie_word_embeddings": false, "num_attention_heads": 32, "num_key_value_heads": 8,
  "head_dim": 128, "max_position_embeddings": 4096, "attention_bias": false, "attention_dropout": 0.0,
  "sliding_window": null, "intermediate_size": 21504, "mlp_bias": false, "ssm_state_size": 128,
  "mamba_num_heads": 128, "mamba_head_dim": 64, "n_groups": 8, "conv_kernel": 4, "chunk_size": 128,
  "mamba_proj_bias": false, "n_routed_experts": 8, "n_shared_experts": 1, "moe_intermediate_size": 7688,
  "moe_shared_expert_intermediate_size": 7688, "moe_latent_size": null, "num_experts_per_tok": 2,
  "num_nextn_predict_layers": 0, "hidden_dropout": 0.0})";

struct Entry {
  HfFamily family;
  std::string_view architecture;  ///< the *ForCausalLM class an "architectures" list names
};

const std::array<Entry, 22> kFamilies = {{
    {{"llama", "LlamaConfig", kLlamaDefaults, WindowRule::kNone, read_llama,
      "gated MLP, RMSNorm, rotary, biases only with attention_bias/mlp_bias"},
     "LlamaForCausalLM"},
    {{"mistral", "MistralConfig", kMistralDefaults, WindowRule::kEveryLayer, read_unbiased,
      "gated MLP, RMSNorm, rotary, no biases, sliding_window on every layer"},
     "MistralForCausalLM"},
    {{"mixtral", "MixtralConfig", kMixtralDefaults, WindowRule::kEveryLayer, read_unbiased,
      "routed gated-MLP experts, RMSNorm, rotary, no biases"},
     "MixtralForCausalLM"},
    {{"qwen2", "Qwen2Config", kQwen2Defaults, WindowRule::kQwen, read_qwen2,
      "gated MLP, RMSNorm, rotary, biases on Q, K and V only"},
     "Qwen2ForCausalLM"},
    {{"qwen2_moe", "Qwen2MoeConfig", kQwen2MoeDefaults, WindowRule::kQwen, read_qwen2,
      "routed and gated shared experts, RMSNorm, rotary, biases on Q, K and V only"},
     "Qwen2MoeForCausalLM"},
    {{"qwen3", "Qwen3Config", kQwen3Defaults, WindowRule::kQwen, read_qwen3,
      "gated MLP, RMSNorm, query/key norms, rotary, no biases"},
     "Qwen3ForCausalLM"},
    {{"qwen3_moe", "Qwen3MoeConfig", kQwen3MoeDefaults, WindowRule::kQwen, read_qwen3,
      "routed gated-MLP experts, RMSNorm, query/key norms, rotary, no biases"},
     "Qwen3MoeForCausalLM"},
    {{"gemma", "GemmaConfig", kGemmaDefaults, WindowRule::kNone, read_gemma,
      "GeGLU MLP, RMSNorm, rotary, tied embeddings"},
     "GemmaForCausalLM"},
    {{"gemma2", "Gemma2Config", kGemma2Defaults, WindowRule::kEvenLayers, read_gemma2,
      "GeGLU MLP, four RMSNorms per block, rotary, tied embeddings, sliding window on every other layer"},
     "Gemma2ForCausalLM"},
    {{"gemma3_text", "Gemma3TextConfig", kGemma3Defaults, WindowRule::kGemma3Pattern, read_gemma3,
      "GeGLU MLP, four RMSNorms per block, query/key norms, rotary, tied embeddings, 5 sliding layers to 1 full"},
     "Gemma3ForCausalLM"},
    {{"phi", "PhiConfig", kPhiDefaults, WindowRule::kNone, read_phi,
      "attention and GELU MLP in parallel behind one LayerNorm, biases everywhere and on the LM head, "
      "partial rotary"},
     "PhiForCausalLM"},
    {{"phi3", "Phi3Config", kPhi3Defaults, WindowRule::kEveryLayer, read_phi3,
      "gated MLP, RMSNorm, rotary, no biases, sliding_window on every layer"},
     "Phi3ForCausalLM"},
    {{"falcon", "FalconConfig", kFalconDefaults, WindowRule::kNone, read_falcon,
      "parallel attention and GELU MLP, multi-query or grouped key/value heads, LayerNorm, tied embeddings"},
     "FalconForCausalLM"},
    {{"gpt2", "GPT2Config", kGpt2Defaults, WindowRule::kNone, read_gpt2,
      "learned positions, LayerNorm, biases, GELU MLP, tied embeddings"},
     "GPT2LMHeadModel"},
    {{"gptj", "GPTJConfig", kGptjDefaults, WindowRule::kNone, read_gptj,
      "attention and GELU MLP in parallel behind one LayerNorm, biases on the MLP and LM head, partial rotary"},
     "GPTJForCausalLM"},
    {{"gpt_neox", "GPTNeoXConfig", kGptNeoxDefaults, WindowRule::kNone, read_gpt_neox,
      "LayerNorm, biases, GELU MLP, partial rotary, untied embeddings"},
     "GPTNeoXForCausalLM"},
    {{"opt", "OPTConfig", kOptDefaults, WindowRule::kNone, read_opt,
      "learned positions (+2 rows), LayerNorm, biases, ReLU MLP, tied embeddings"},
     "OPTForCausalLM"},
    {{"bloom", "BloomConfig", kBloomDefaults, WindowRule::kNone, read_bloom,
      "ALiBi, embedding LayerNorm, LayerNorm, biases, GELU MLP, tied embeddings"},
     "BloomForCausalLM"},
    {{"deepseek_v2", "DeepseekV2Config", kDeepseekV2Defaults, WindowRule::kNone, read_unbiased,
      "latent attention, shared and routed gated experts, RMSNorm, no biases"},
     "DeepseekV2ForCausalLM"},
    {{"deepseek_v3", "DeepseekV3Config", kDeepseekV3Defaults, WindowRule::kNone, read_unbiased,
      "latent attention, shared and routed gated experts, RMSNorm, no biases"},
     "DeepseekV3ForCausalLM"},
    {{"gpt_oss", "GptOssConfig", kGptOssDefaults, WindowRule::kEvenLayers, read_gpt_oss,
      "routed gated experts with biases, attention sinks, RMSNorm, sliding window on every other layer"},
     "GptOssForCausalLM"},
    {{"nemotron_h", "NemotronHConfig", kNemotronHDefaults, WindowRule::kNone, read_nemotron_h,
      "hybrid stack of Mamba-2 mixers, attention without position embeddings and squared-ReLU MLPs or routed "
      "experts, one RMSNorm a layer"},
     "NemotronHForCausalLM"},
}};

}  // namespace

const HfFamily* find_hf_family(std::string_view model_type) {
  const auto it = std::find_if(kFamilies.begin(), kFamilies.end(),
                               [&](const Entry& e) { return e.family.model_type == model_type; });
  return it == kFamilies.end() ? nullptr : &it->family;
}

const HfFamily* find_hf_family_by_architecture(std::string_view architecture) {
  const auto it =
      std::find_if(kFamilies.begin(), kFamilies.end(), [&](const Entry& e) { return e.architecture == architecture; });
  return it == kFamilies.end() ? nullptr : &it->family;
}

std::string supported_hf_model_types() {
  std::string out;
  for (const Entry& e : kFamilies) out += (out.empty() ? "" : ", ") + std::string(e.family.model_type);
  return out;
}

}  // namespace stepcast::workload
