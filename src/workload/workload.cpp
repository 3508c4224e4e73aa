// Parameter counts of a transformer from its shape.
// Reference: Narayanan et al. 2021 (arXiv:2104.04473), section 5.1: P = 12lh^2(1 + 13/(12h) +
// (V+s)/(12lh)) for GPT; the terms below reduce to exactly that for a GPT shape (biases,
// LayerNorm, learned positions, tied embeddings) and extend it to GQA and gated MLPs.
#include "stepcast/workload/workload.hpp"

#include "stepcast/core/errors.hpp"

namespace stepcast::workload {

namespace {

double norm_parameters(const TransformerShape& s) {
  const double h = s.hidden;
  return s.norm == Norm::kLayerNorm ? 2.0 * h : h;  // gain (+ bias for LayerNorm)
}

}  // namespace

double attention_parameter_count(const TransformerShape& s) {
  const double h = s.hidden;
  const double heads = s.heads;
  if (s.mla) {
    // Latent attention (DeepSeek-V2 section 2.1, and its modeling_deepseek.py): queries through
    // q_a (h x q_lora), an RMSNorm and q_b (q_lora x heads x (nope + rope)), or one h x heads x
    // (nope + rope) matrix without q_lora; kv_a (h x (kv_lora + rope)), an RMSNorm, kv_b (kv_lora x
    // heads x (nope + v)); the output projection heads x v x h.
    const MlaShape& m = *s.mla;
    const double qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const double q =
        m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * heads * qk : h * heads * qk;
    const double kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank +
                      static_cast<double>(m.kv_lora_rank) * heads * (m.qk_nope_head_dim + m.v_head_dim);
    return q + kv + heads * m.v_head_dim * h;
  }
  const double q = s.query_width();
  const double kv = static_cast<double>(s.kv_heads) * s.head_dim();  // width of K and of V
  // Q (h x q), K and V (h x kv each), output projection (q x h).
  double attention = 2.0 * h * q + 2.0 * h * kv;
  if (s.biases || s.attention_biases) {
    attention += q + 2.0 * kv + h;
  } else if (s.qkv_biases) {
    attention += q + 2.0 * kv;
  }
  // q_norm and k_norm over each head's dims (Qwen3, Gemma 3: RMSNorm gains; Phi's qk_layernorm
  // adds their biases).
  if (s.qk_norm) attention += 2.0 * (s.norm == Norm::kLayerNorm ? 2.0 : 1.0) * s.head_dim();
  if (s.attention_sinks) attention += heads;  // GPT-OSS: one sink logit per head
  return attention;
}

namespace {

/// The dense MLP: up and down projections, plus the gate of a SwiGLU MLP (Shazeer 2020).
double dense_mlp_parameters(const TransformerShape& s) {
  const double h = s.hidden;
  const double f = s.ffn_hidden;
  double mlp = (s.gated_mlp ? 3.0 : 2.0) * h * f;
  if (s.biases || s.mlp_biases) mlp += (s.gated_mlp ? 2.0 : 1.0) * f + h;
  return mlp;
}

}  // namespace

double layer_parameter_count(const TransformerShape& s) {
  return attention_parameter_count(s) + dense_mlp_parameters(s) + s.block_norms * norm_parameters(s);
}

double expert_parameter_count(const TransformerShape& s) {
  STEPCAST_ASSERT(s.moe.has_value(), "expert_parameter_count needs an MoE shape");
  const double w = s.expert_width();
  const double f = s.moe->expert_ffn;
  double expert = (s.gated_mlp ? 3.0 : 2.0) * w * f;
  if (s.moe->expert_biases) expert += (s.gated_mlp ? 2.0 : 1.0) * f + w;
  return expert;
}

double latent_projection_parameters(const TransformerShape& s) {
  if (!s.moe || s.moe->latent == 0) return 0.0;
  return 2.0 * static_cast<double>(s.hidden) * s.moe->latent;
}

namespace {

/// One shared expert: a gated (or plain) MLP of shared_ffn.
double shared_expert_parameters(const TransformerShape& s) {
  return (s.gated_mlp ? 3.0 : 2.0) * static_cast<double>(s.hidden) * s.moe->shared_ffn;
}

/// The router, LatentMoE's two projections and the shared experts: what every token of an MoE
/// MLP passes through.
double router_and_shared_parameters(const TransformerShape& s) {
  const MoeShape& m = *s.moe;
  const double h = s.hidden;
  double router = h * m.experts + (m.router_bias ? m.experts : 0.0) + latent_projection_parameters(s);
  double shared = m.shared_experts * shared_expert_parameters(s);
  if (m.shared_expert_gate && m.shared_experts > 0) shared += h;
  return router + shared;
}

/// What every token of an MoE block passes through: attention, norms, router, shared experts.
double moe_layer_common_parameters(const TransformerShape& s) {
  return attention_parameter_count(s) + router_and_shared_parameters(s) + s.block_norms * norm_parameters(s);
}

/// An MTP module (DeepSeek-V3 section 2.2): two RMSNorms of h, the projection M (h x 2h), one
/// transformer block (MoE there); the embedding and output head are shared with the main model.
double mtp_extra_parameters(const TransformerShape& s) {
  const double h = s.hidden;
  return 2.0 * norm_parameters(s) + 2.0 * h * h;
}

}  // namespace

double moe_layer_parameter_count(const TransformerShape& s) {
  return moe_layer_common_parameters(s) + s.moe->experts * expert_parameter_count(s);
}

double moe_layer_active_parameter_count(const TransformerShape& s) {
  return moe_layer_common_parameters(s) + s.moe->top_k * expert_parameter_count(s);
}

bool MoeShape::is_moe_layer(int index) const {
  if (index < first_dense_layers) return false;
  return step_from_one ? (index + 1) % layer_step == 0 : index % layer_step == 0;
}

Block TransformerShape::block(int index) const {
  if (!hybrid) return Block::kTransformer;
  switch (hybrid->pattern[static_cast<std::size_t>(index)]) {
    case 'M':
      return Block::kMamba;
    case '*':
      return Block::kAttention;
    default:  // '-' and 'E' (the reader admits no other letter)
      return Block::kMlp;
  }
}

bool TransformerShape::is_moe_layer(int index) const {
  if (hybrid) return hybrid->pattern[static_cast<std::size_t>(index)] == 'E';
  return moe && moe->is_moe_layer(index);
}

int TransformerShape::moe_layer_count() const {
  int count = 0;
  for (int i = 0; i < layers; ++i) count += is_moe_layer(i) ? 1 : 0;
  return count;
}

double mamba_parameter_count(const TransformerShape& s) {
  STEPCAST_ASSERT(s.hybrid.has_value(), "mamba_parameter_count needs a hybrid shape");
  const MambaShape& m = s.hybrid->mamba;
  const double h = s.hidden;
  const double inner = m.inner();
  const double in_proj = h * (2.0 * inner + 2.0 * m.groups * m.state + m.heads);
  const double conv = static_cast<double>(m.conv_channels()) * (m.conv_kernel + 1.0);  // weights and bias
  return in_proj + conv + 3.0 * m.heads + inner + inner * h;  // dt bias, A, D; gated norm; out_proj
}

double block_parameter_count(const TransformerShape& s, int index, bool active) {
  const bool moe = s.is_moe_layer(index);
  switch (s.block(index)) {
    case Block::kTransformer:
      if (!moe) return layer_parameter_count(s);
      return active ? moe_layer_active_parameter_count(s) : moe_layer_parameter_count(s);
    case Block::kMamba:
      return mamba_parameter_count(s) + norm_parameters(s);
    case Block::kAttention:
      return attention_parameter_count(s) + norm_parameters(s);
    case Block::kMlp:
      break;
  }
  if (!moe) return dense_mlp_parameters(s) + norm_parameters(s);
  const double experts = active ? s.moe->top_k : s.moe->experts;
  return router_and_shared_parameters(s) + experts * expert_parameter_count(s) + norm_parameters(s);
}

namespace {

/// The MTP modules the model holds, each MoE block counted whole or (`active`) with its top-k
/// experts: each module's block is an MoE block where the model has experts (DeepSeek-V3).
double mtp_modules(const TransformerShape& s, bool active) {
  const double block = !s.moe   ? layer_parameter_count(s)
                       : active ? moe_layer_active_parameter_count(s)
                                : moe_layer_parameter_count(s);
  return s.mtp_weight_modules() * (block + mtp_extra_parameters(s));
}

/// Blocks and MTP modules, each MoE block counted whole or (`active`) with its top-k experts.
double blocks(const TransformerShape& s, bool active) {
  double total = 0.0;
  for (int i = 0; i < s.layers; ++i) total += block_parameter_count(s, i, active);
  return total + mtp_modules(s, active);
}

}  // namespace

double embedding_parameter_count(const TransformerShape& s) {
  const double h = s.hidden;
  const double embedding = static_cast<double>(s.vocab) * h;
  double total = embedding;
  if (!s.tied_embeddings) total += embedding;  // separate output projection (LM head)
  if (s.lm_head_bias) total += s.vocab;
  if (s.learned_positions) total += static_cast<double>(s.position_rows > 0 ? s.position_rows : s.seq_len) * h;
  if (s.embedding_norm) total += norm_parameters(s);
  return total + norm_parameters(s);  // final norm
}

double mtp_parameter_count(const TransformerShape& s) { return mtp_modules(s, false); }

double active_parameter_count(const TransformerShape& s) { return blocks(s, true) + embedding_parameter_count(s); }

double parameter_count(const TransformerShape& s) { return blocks(s, false) + embedding_parameter_count(s); }

}  // namespace stepcast::workload
