// Reading the MoE and attention fields of Hugging Face configs, as transformers' configuration
// classes define them (MixtralConfig, Qwen2MoeConfig, Qwen3MoeConfig, DeepseekV2Config,
// DeepseekV3Config, GptOssConfig, NemotronHConfig). Keys are told apart by vocabulary: any key
// that speaks of experts, routers, windows, latent ranks or head dims must be one this file reads
// or knows to leave the cost unchanged, or the config is refused (a Mixtral priced as a dense
// model is wrong by 3.6x in parameters, with no word of warning).
#include "hf_extensions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace stepcast::workload {

namespace {

/// Words that mark a key as an MoE or attention setting.
constexpr std::array<std::string_view, 16> kMoeOrAttentionWords = {
    "expert",   "moe",   "router",      "topk",     "top_k",   "sparse", "lora",    "window",
    "head_dim", "nextn", "layer_types", "mlp_only", "n_group", "routed", "scoring", "aux_loss"};

/// Keys this file reads.
constexpr std::array<std::string_view, 35> kRead = {"head_dim",
                                                    "sliding_window",
                                                    "sliding_window_pattern",
                                                    "use_sliding_window",
                                                    "max_window_layers",
                                                    "layer_types",
                                                    "num_local_experts",
                                                    "num_experts",
                                                    "n_routed_experts",
                                                    "num_experts_per_tok",
                                                    "experts_per_token",
                                                    "moe_intermediate_size",
                                                    "shared_expert_intermediate_size",
                                                    "n_shared_experts",
                                                    "first_k_dense_replace",
                                                    "moe_layer_freq",
                                                    "decoder_sparse_step",
                                                    "mlp_only_layers",
                                                    "q_lora_rank",
                                                    "kv_lora_rank",
                                                    "qk_rope_head_dim",
                                                    "qk_nope_head_dim",
                                                    "v_head_dim",
                                                    "num_nextn_predict_layers",
                                                    "sliding_window_size",
                                                    "layers_block_type",
                                                    "mamba_head_dim",
                                                    "n_groups",
                                                    "moe_shared_expert_intermediate_size",
                                                    "moe_latent_size",
                                                    "mtp_layers_block_type",
                                                    "mtp_hybrid_override_pattern",
                                                    "n_group",
                                                    "topk_group",
                                                    "topk_method"};

/// Keys that change training behaviour but not the work or memory of a step: load-balancing
/// losses, how routing scores are normalised, inference-time expert placement.
constexpr std::array<std::string_view, 10> kNoCost = {
    "router_aux_loss_coef", "output_router_logits",     "norm_topk_prob", "routed_scaling_factor",
    "scoring_func",         "aux_loss_alpha",           "seq_aux",        "ep_size",
    "router_jitter_noise",  "moe_shared_expert_overlap"};

bool contains(std::string_view key, std::string_view word) { return key.find(word) != std::string_view::npos; }

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& list, std::string_view key) {
  return std::find(list.begin(), list.end(), key) != list.end();
}

/// An integer field that may be absent or null (0 then).
int int_or_zero(const JsonReader& r, std::string_view key) {
  const auto found = r.find(key);
  if (!found || found->json().is_null()) return 0;
  const std::int64_t v = found->integer();
  if (v < 0 || v > 1 << 30) found->fail(fmt::format("expected a whole number from 0 to 2^30, got {}", v));
  return static_cast<int>(v);
}

/// Group-limited routing: DeepSeek-V2's group_limited_greedy, V3's noaux_tc and NemotronH draw a
/// token's experts from its best topk_group of n_group groups; DeepSeek's "greedy" from all
/// (modeling_deepseek.py, modeling_nemotron_h.py).
void read_router_groups(const JsonReader& r, MoeShape& m) {
  const auto method = r.find("topk_method");
  if (method && method->json() == "greedy") return;
  const int groups = int_or_zero(r, "n_group");
  if (groups == 0) return;
  m.router_groups = groups;
  m.router_group_topk = std::max(1, int_or_zero(r, "topk_group"));
}

int required_count(const JsonReader& r, std::string_view key) {
  const std::int64_t v = r.at(key).count();
  if (v > 1 << 30) r.at(key).fail(fmt::format("too large, got {}", v));
  return static_cast<int>(v);
}

void refuse_unknown_fields(const JsonReader& r) {
  for (const auto& [key, value] : r.members()) {
    if (listed(kRead, key) || listed(kNoCost, key)) continue;
    for (const std::string_view word : kMoeOrAttentionWords) {
      if (contains(key, word)) {
        value.fail(fmt::format(
            "\"{}\" is an MoE or attention setting stepcast does not model; the config is refused rather than "
            "priced without it (stepcast reads: Mixtral, Qwen2/3-MoE, DeepSeek-V2/V3, GPT-OSS and NemotronH fields)",
            key));
      }
    }
  }
}

/// The layers a window applies to without a layer_types list, by the family's rule.
int rule_sliding_layers(const JsonReader& r, WindowRule rule, int layers) {
  switch (rule) {
    case WindowRule::kNone:
      return 0;  // the family's attention takes no window, whatever the config holds
    case WindowRule::kEveryLayer:
      return layers;
    case WindowRule::kQwen: {
      // Windows only with use_sliding_window, on the layers from max_window_layers on
      // (Qwen2Config.layer_types); the cost model spreads them over the stages evenly.
      const auto use = r.find("use_sliding_window");
      if (!use || use->json().is_null() || !use->boolean()) return 0;
      return std::max(0, layers - int_or_zero(r, "max_window_layers"));
    }
    case WindowRule::kEvenLayers:
      return (layers + 1) / 2;  // layers 0, 2, 4, ...: (i + 1) % 2 != 0
    case WindowRule::kGemma3Pattern: {
      // Gemma3TextConfig: layer i attends fully when (i + 1) % sliding_window_pattern == 0.
      const int pattern = required_count(r, "sliding_window_pattern");
      return layers - layers / pattern;
    }
  }
  return 0;
}

void read_sliding_window(const JsonReader& r, WindowRule rule, TransformerShape& s) {
  const int window = int_or_zero(r, "sliding_window");
  if (const auto types = r.find("layer_types"); types && !types->json().is_null()) {
    // GPT-OSS, Gemma 3 and newer Qwen configs list each layer's attention: full or sliding.
    const auto layers = types->elements();
    if (static_cast<int>(layers.size()) != s.layers) {
      types->fail(fmt::format("lists {} layers, but num_hidden_layers is {}", layers.size(), s.layers));
    }
    for (const JsonReader& layer : layers) {
      const std::string kind = layer.string();
      if (kind == "sliding_attention") {
        ++s.sliding_layers;
      } else if (kind != "full_attention") {
        layer.fail(
            fmt::format("unknown attention type \"{}\" (stepcast models full_attention and sliding_attention)", kind));
      }
    }
    if (s.sliding_layers > 0 && window == 0)
      types->fail("lists sliding_attention layers but the config gives no sliding_window");
    s.sliding_window = s.sliding_layers > 0 ? window : 0;
    return;
  }
  if (window == 0) return;  // null: no window
  s.sliding_layers = rule_sliding_layers(r, rule, s.layers);
  s.sliding_window = s.sliding_layers > 0 ? window : 0;
}

void read_moe(const JsonReader& r, const JsonReader& given, std::string_view model_type, TransformerShape& s) {
  const bool deepseek = model_type.starts_with("deepseek");
  const char* experts_key = r.has("n_routed_experts")    ? "n_routed_experts"
                            : r.has("num_local_experts") ? "num_local_experts"
                                                         : "num_experts";
  const int experts = int_or_zero(r, experts_key);
  if (experts == 0) {
    // The family's defaults may hold MoE fields (DeepSeek-V2's moe_intermediate_size); the config's own may not.
    if (given.has("moe_intermediate_size") || given.has("num_experts_per_tok") || given.has("experts_per_token")) {
      given.fail("gives MoE fields but no expert count (num_local_experts, num_experts or n_routed_experts)");
    }
    return;
  }
  MoeShape m;
  m.experts = experts;
  const char* top_k_key =
      given.has("experts_per_token") && !given.has("num_experts_per_tok") ? "experts_per_token" : "num_experts_per_tok";
  m.top_k = required_count(r, top_k_key);
  if (m.top_k > m.experts)
    r.at(top_k_key).fail(fmt::format("top-k ({}) exceeds the {} routed experts", m.top_k, m.experts));
  // Mixtral and GPT-OSS size their experts by intermediate_size; Qwen and DeepSeek give a
  // separate moe_intermediate_size and keep intermediate_size for dense layers.
  m.expert_ffn = r.has("moe_intermediate_size") ? required_count(r, "moe_intermediate_size") : s.ffn_hidden;
  if (deepseek) {
    // DeepSeekMoE (Dai et al. 2024): n_shared_experts experts of moe_intermediate_size, dense
    // layers first, every moe_layer_freq-th layer after counted from 0 (modeling_deepseek.py).
    m.shared_experts = int_or_zero(r, "n_shared_experts");
    m.shared_ffn = m.expert_ffn;
    m.first_dense_layers = int_or_zero(r, "first_k_dense_replace");
    m.layer_step = r.has("moe_layer_freq") ? required_count(r, "moe_layer_freq") : 1;
    m.step_from_one = false;
    read_router_groups(r, m);
  } else {
    // Qwen2-MoE: one shared expert of shared_expert_intermediate_size behind a sigmoid gate;
    // every decoder_sparse_step-th layer counted from 1 (modeling_qwen2_moe.py).
    const int shared = int_or_zero(r, "shared_expert_intermediate_size");
    if (shared > 0) {
      m.shared_experts = 1;
      m.shared_ffn = shared;
      m.shared_expert_gate = true;
    }
    m.layer_step = r.has("decoder_sparse_step") ? required_count(r, "decoder_sparse_step") : 1;
    if (const auto only = r.find("mlp_only_layers"); only && !only->json().is_null() && !only->elements().empty()) {
      only->fail("lists dense layers among the MoE layers, a layout stepcast does not model");
    }
  }
  if (m.first_dense_layers > s.layers) {
    r.at("first_k_dense_replace")
        .fail(fmt::format("{} dense layers exceed the {} layers", m.first_dense_layers, s.layers));
  }
  if (model_type == "gpt_oss") {
    // GPT-OSS (its model card, section 2.1): biases on the router and on every expert, and the
    // experts' GLU inputs clamped at swiglu_limit (modeling_gpt_oss.py, GptOssExperts).
    m.router_bias = true;
    m.expert_biases = true;
    if (const auto limit = r.find("swiglu_limit")) m.glu_clamp = limit->positive_number();
  }
  s.moe = m;
}

/// NemotronH's routed experts (modeling_nemotron_h.py, NemotronHMoE): on its E layers only,
/// squared-ReLU experts of moe_intermediate_size and n_shared_experts shared ones of
/// moe_shared_expert_intermediate_size, ungated; a sigmoid router whose correction bias is not trained.
void read_nemotron_moe(const JsonReader& r, TransformerShape& s) {
  if (s.hybrid->pattern.find('E') == std::string::npos) return;
  MoeShape m;
  m.experts = required_count(r, "n_routed_experts");
  m.top_k = required_count(r, "num_experts_per_tok");
  if (m.top_k > m.experts)
    r.at("num_experts_per_tok").fail(fmt::format("top-k ({}) exceeds the {} routed experts", m.top_k, m.experts));
  m.expert_ffn = required_count(r, "moe_intermediate_size");
  m.shared_experts = int_or_zero(r, "n_shared_experts");
  m.shared_ffn = m.shared_experts > 0 ? required_count(r, "moe_shared_expert_intermediate_size") : 0;
  read_router_groups(r, m);
  // LatentMoE (Nemotron 3 Super): the experts on moe_latent_size, null where there is none.
  m.latent = int_or_zero(r, "moe_latent_size");
  if (m.latent > s.hidden)
    r.at("moe_latent_size").fail(fmt::format("a latent of {} is wider than the hidden size {}", m.latent, s.hidden));
  s.moe = m;
}

/// A hybrid model's MTP module as stepcast prices it: attention, then routed experts where the
/// model has them (Nemotron 3 Super's mtp_hybrid_override_pattern "*E") or a dense MLP ("*-").
void check_hybrid_mtp(const JsonReader& r, const TransformerShape& s) {
  const auto pattern = r.find("mtp_hybrid_override_pattern");
  if (s.mtp_layers == 0 || !pattern || pattern->json().is_null()) return;
  const std::string expected = s.moe ? "*E" : "*-";
  if (pattern->string() != expected)
    pattern->fail(fmt::format("an MTP module of \"{}\" is not modelled: stepcast prices \"{}\" (attention, then {})",
                              pattern->string(), expected, s.moe ? "routed experts" : "an MLP"));
}

void read_mla(const JsonReader& r, TransformerShape& s) {
  const int kv_lora = int_or_zero(r, "kv_lora_rank");
  if (kv_lora == 0) {
    for (const std::string_view key : {"q_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim"}) {
      if (int_or_zero(r, key) > 0) r.at(key).fail("latent-attention field without kv_lora_rank");
    }
    return;
  }
  MlaShape m;
  m.kv_lora_rank = kv_lora;
  m.q_lora_rank = int_or_zero(r, "q_lora_rank");  // null in DeepSeek-V2-Lite: a full query projection
  m.qk_rope_head_dim = required_count(r, "qk_rope_head_dim");
  m.qk_nope_head_dim = required_count(r, "qk_nope_head_dim");
  m.v_head_dim = required_count(r, "v_head_dim");
  s.mla = m;
  s.kv_heads = s.heads;  // every head has its own key and value, expanded from the latent
}

}  // namespace

void read_hf_extensions(const JsonReader& merged, const JsonReader& given, const HfFamily& family,
                        TransformerShape& s) {
  refuse_unknown_fields(given);
  if (const int head_dim = int_or_zero(merged, "head_dim"); head_dim > 0 && head_dim * s.heads != s.hidden)
    s.explicit_head_dim = head_dim;
  if (s.hybrid) {
    read_nemotron_moe(merged, s);
  } else {
    read_sliding_window(merged, family.windows, s);
    read_moe(merged, given, family.model_type, s);
  }
  read_mla(merged, s);
  s.mtp_layers = int_or_zero(merged, "num_nextn_predict_layers");
  if (s.hybrid) check_hybrid_mtp(merged, s);
}

}  // namespace stepcast::workload
