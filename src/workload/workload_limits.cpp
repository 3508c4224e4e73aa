// Range checks of a shape's counts, one table for every spelling of a shape (stepcast's JSON and
// Hugging Face config.json), applied before the shape's counts are multiplied.
#include "workload_limits.hpp"

#include <fmt/format.h>

#include <array>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace stepcast::workload::detail {
namespace {

// Published models stay far below these (widest: Megatron-LM's 1T GPT, hidden 25600; most layers:
// 128; largest vocabulary: 262144; longest context: 10M tokens; most experts: PEER's 1M,
// He 2024; latent attention dims: DeepSeek-V3's 1536 and 512).
constexpr int kMaxLayers = 1 << 14;
constexpr int kMaxHidden = 1 << 20;
constexpr int kMaxHeads = 1 << 14;
constexpr int kMaxFfn = 1 << 22;
constexpr int kMaxVocab = 1 << 24;
constexpr int kMaxSeq = 1 << 27;
constexpr int kMaxHeadDim = 1 << 16;
constexpr int kMaxExperts = 1 << 20;
constexpr int kMaxSharedExperts = 1 << 10;

/// One count of the shape: its value, its limit, and the keys that spell it in the two forms.
struct Limit {
  std::string_view name;
  long long value;
  int max;
  std::initializer_list<std::string_view> keys;
};

/// The reader of the first of `keys` that `where` or its "moe", "mla" or "mamba" block holds.
std::optional<JsonReader> locate(const JsonReader& where, std::initializer_list<std::string_view> keys) {
  for (const std::string_view block :
       {std::string_view(), std::string_view("moe"), std::string_view("mla"), std::string_view("mamba")}) {
    const std::optional<JsonReader> in = block.empty() ? std::optional<JsonReader>(where) : where.find(block);
    if (!in || !in->json().is_object()) continue;
    for (const std::string_view key : keys) {
      if (auto found = in->find(key)) return found;
    }
  }
  return std::nullopt;
}

void check(const Limit& limit, const JsonReader& where) {
  if (limit.value >= 0 && limit.value <= limit.max) return;
  const std::optional<JsonReader> at = locate(where, limit.keys);
  const JsonReader& reader = at ? *at : where;
  if (limit.value < 0) reader.fail(fmt::format("the {} must be >= 0, got {}", limit.name, limit.value));
  reader.fail(fmt::format("the {} {} is above stepcast's limit of {}, far beyond any published model: a typo?",
                          limit.name, limit.value, limit.max));
}

}  // namespace

void check_shape_limits(const TransformerShape& s, const JsonReader& where) {
  const std::array<Limit, 10> dense{{
      {"layer count", s.layers, kMaxLayers, {"layers", "num_hidden_layers", "n_layer"}},
      {"hidden size", s.hidden, kMaxHidden, {"hidden", "hidden_size", "n_embd"}},
      {"attention head count", s.heads, kMaxHeads, {"heads", "num_attention_heads", "n_head"}},
      {"key/value head count", s.kv_heads, kMaxHeads, {"kv_heads", "num_key_value_heads"}},
      {"MLP width", s.ffn_hidden, kMaxFfn, {"ffn_hidden", "intermediate_size", "n_inner"}},
      {"vocabulary", s.vocab, kMaxVocab, {"vocab", "vocab_size"}},
      {"sequence length", s.seq_len, kMaxSeq, {"seq_len", "max_position_embeddings", "n_positions"}},
      {"head dimension", s.explicit_head_dim, kMaxHeadDim, {"head_dim"}},
      {"sliding window", s.sliding_window, kMaxSeq, {"sliding_window"}},
      {"MTP module count", s.mtp_layers, kMaxLayers, {"mtp_layers", "num_nextn_predict_layers"}},
  }};
  for (const Limit& limit : dense) check(limit, where);
  if (s.moe) {
    const MoeShape& m = *s.moe;
    const std::array<Limit, 10> moe{{
        {"routed expert count",
         m.experts,
         kMaxExperts,
         {"experts", "num_experts", "n_routed_experts", "num_local_experts"}},
        {"experts per token", m.top_k, kMaxExperts, {"top_k", "num_experts_per_tok", "experts_per_token"}},
        {"expert MLP width", m.expert_ffn, kMaxFfn, {"expert_ffn", "moe_intermediate_size"}},
        {"shared expert count", m.shared_experts, kMaxSharedExperts, {"shared_experts", "n_shared_experts"}},
        {"shared expert MLP width", m.shared_ffn, kMaxFfn, {"shared_ffn", "shared_expert_intermediate_size"}},
        {"expert latent width", m.latent, kMaxHidden, {"latent", "moe_latent_size"}},
        {"leading dense layer count",
         m.first_dense_layers,
         kMaxLayers,
         {"first_dense_layers", "first_k_dense_replace"}},
        {"MoE layer step", m.layer_step, kMaxLayers, {"layer_step", "decoder_sparse_step", "moe_layer_freq"}},
        {"router group count", m.router_groups, kMaxExperts, {"router_groups", "n_group"}},
        {"router groups a token draws from", m.router_group_topk, kMaxExperts, {"router_group_topk", "topk_group"}},
    }};
    for (const Limit& limit : moe) check(limit, where);
  }
  if (s.mla) {
    const MlaShape& m = *s.mla;
    const std::array<Limit, 5> mla{{
        {"query latent rank", m.q_lora_rank, kMaxHeadDim, {"q_lora_rank"}},
        {"key/value latent rank", m.kv_lora_rank, kMaxHeadDim, {"kv_lora_rank"}},
        {"query/key head dimension without rotation", m.qk_nope_head_dim, kMaxHeadDim, {"qk_nope_head_dim"}},
        {"rotary head dimension", m.qk_rope_head_dim, kMaxHeadDim, {"qk_rope_head_dim"}},
        {"value head dimension", m.v_head_dim, kMaxHeadDim, {"v_head_dim"}},
    }};
    for (const Limit& limit : mla) check(limit, where);
  }
  if (s.hybrid) {
    const MambaShape& m = s.hybrid->mamba;
    const std::array<Limit, 6> mamba{{
        {"Mamba head count", m.heads, kMaxHeads, {"heads", "mamba_num_heads"}},
        {"Mamba head dimension", m.head_dim, kMaxHeadDim, {"head_dim", "mamba_head_dim"}},
        {"SSM state size", m.state, kMaxHeadDim, {"state", "ssm_state_size"}},
        {"Mamba group count", m.groups, kMaxHeads, {"groups", "n_groups"}},
        {"Mamba conv1d width", m.conv_kernel, kMaxHeadDim, {"conv_kernel"}},
        {"SSD chunk size", m.chunk, kMaxSeq, {"chunk", "chunk_size"}},
    }};
    for (const Limit& limit : mamba) check(limit, where);
  }
}

}  // namespace stepcast::workload::detail
