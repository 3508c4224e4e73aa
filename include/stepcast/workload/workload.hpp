// A training workload: a decoder-only transformer described by its shape, or a bare parameter
// count (the seeds' "7B model"). Loaded from stepcast's JSON or a Hugging Face config.json.
#pragma once

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

namespace stepcast::workload {

/// Normalisation layers: LayerNorm has a gain and a bias (2h), RMSNorm only a gain (h).
enum class Norm { kLayerNorm, kRmsNorm };

/// Routed experts in place of the dense MLP (Shazeer et al. 2017; Fedus et al. 2022), as Mixtral,
/// Qwen2/3-MoE, DeepSeek-V2/V3 and GPT-OSS configure them. Experts are gated MLPs when the
/// shape's MLP is gated.
struct MoeShape {
  int experts = 0;             ///< routed experts per MoE layer
  int top_k = 0;               ///< routed experts each token is sent to
  int expert_ffn = 0;          ///< inner width of one routed expert
  int shared_experts = 0;      ///< experts every token passes through (DeepSeek, Qwen2-MoE)
  int shared_ffn = 0;          ///< inner width of one shared expert
  int first_dense_layers = 0;  ///< leading layers with the dense MLP (DeepSeek's first_k_dense_replace)
  /// Group-limited routing (DeepSeek-V3 report, section 2.1.2; Megatron-Core's
  /// moe_router_num_groups and moe_router_group_topk): the experts in `router_groups` contiguous
  /// groups, each token's top-k drawn from its best `router_group_topk` groups. 1 and 1: no limit.
  int router_groups = 1;
  int router_group_topk = 1;
  /// Every layer_step-th layer is an MoE layer (Qwen's decoder_sparse_step counts layers from 1,
  /// DeepSeek's moe_layer_freq from 0: step_from_one tells them apart).
  int layer_step = 1;
  bool step_from_one = true;
  bool router_bias = false;    ///< GPT-OSS's router carries a bias
  bool expert_biases = false;  ///< GPT-OSS's experts carry biases
  /// GPT-OSS clamps its experts' GLU inputs: the gate half at most `glu_clamp`, the linear half
  /// within +-`glu_clamp` (Hugging Face's swiglu_limit, 7.0). 0: no clamp.
  double glu_clamp = 0.0;
  bool shared_expert_gate = false;  ///< Qwen2-MoE gates its shared expert with an h x 1 sigmoid
  /// LatentMoE (Nemotron 3 Super's moe_latent_size): the routed experts run on a latent width.
  /// fc1_latent_proj (h -> latent) before the dispatch and fc2_latent_proj (latent -> h) after
  /// the combine, both duplicated on every tensor-parallel rank (Megatron-Core's MoELayer); the
  /// router and shared experts read the full hidden state. 0: the experts read the hidden state.
  int latent = 0;

  /// Whether layer `index` (0-based) is an MoE layer.
  [[nodiscard]] bool is_moe_layer(int index) const;
};

/// Multi-head latent attention (DeepSeek-V2, arXiv:2405.04434, section 2.1): queries through a
/// low-rank q_lora_rank (0: a full projection), keys and values from a shared kv_lora_rank
/// latent; each head's query/key has qk_nope + qk_rope dims, its value v_head_dim.
struct MlaShape {
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
};

/// A Mamba-2 mixer (Dao & Gu 2024, arXiv:2405.21060, section 7) as Megatron-Core's MambaMixer and
/// Hugging Face's NemotronH run it: in_proj h -> [z, x, B, C, dt] (2 inner + 2 groups x state +
/// heads), a causal depthwise conv1d over [x, B, C], the chunked SSD scan, a gated RMSNorm over
/// inner, out_proj inner -> h.
struct MambaShape {
  int heads = 0;        ///< mamba_num_heads: SSM heads
  int head_dim = 0;     ///< P: channels per head (inner = heads x head_dim)
  int state = 0;        ///< N: ssm_state_size
  int groups = 1;       ///< n_groups: heads sharing one B and C
  int conv_kernel = 4;  ///< width of the causal conv1d
  int chunk = 128;      ///< Q: chunk_size of the SSD scan

  [[nodiscard]] int inner() const { return heads * head_dim; }
  /// Channels the conv1d runs over: x, B and C.
  [[nodiscard]] int conv_channels() const { return inner() + 2 * groups * state; }
};

/// What one layer of a model holds. A transformer layer is attention then an MLP (dense or routed
/// experts); a hybrid model (Nemotron-H, Nemotron 3) lists single sublayers instead: a Mamba-2
/// mixer, attention alone, or an MLP alone, each behind its own norm.
enum class Block { kTransformer, kMamba, kAttention, kMlp };

/// A hybrid layer stack in Megatron-Core's hybrid_override_pattern letters: M (Mamba-2), *
/// (attention), - (dense MLP), E (routed experts), one letter a layer.
struct HybridShape {
  std::string pattern;
  MambaShape mamba;
};

/// The shape of a decoder-only transformer, in the vocabulary of Narayanan et al. 2021 (l, h, a,
/// V, s) extended for grouped-query attention and gated MLPs (Llama).
struct TransformerShape {
  int layers = 0;                ///< l: transformer blocks
  int hidden = 0;                ///< h: model width
  int heads = 0;                 ///< a: attention (query) heads; head dim = hidden / heads
  int kv_heads = 0;              ///< key/value heads (GQA); == heads for multi-head attention
  int ffn_hidden = 0;            ///< MLP inner width (4h for GPT; intermediate_size for Llama)
  bool gated_mlp = false;        ///< SwiGLU-style MLP with three matrices instead of two
  int vocab = 0;                 ///< V: vocabulary size
  int seq_len = 0;               ///< s: training sequence length (a plan may override it); 0 = none stated
  bool tied_embeddings = false;  ///< output projection shares the input embedding matrix
  bool biases = false;           ///< every linear layer of a block carries a bias (GPT-2/3) or none (Llama)
  /// Families that bias only some layers: Q, K, V and O (Llama's attention_bias, Qwen3), Q, K and
  /// V alone (Qwen2), the MLP alone (GPT-J); and a bias on the LM head (Phi-2, GPT-J).
  bool attention_biases = false;
  bool qkv_biases = false;
  bool mlp_biases = false;
  bool lm_head_bias = false;
  /// Norms per block: 2 (before attention and before the MLP); 1 where attention and MLP run in
  /// parallel behind one (GPT-J, Phi-2, Falcon-7B); 4 with Gemma 2/3's norms after each sublayer.
  int block_norms = 2;
  bool embedding_norm = false;  ///< a LayerNorm on the token embeddings (BLOOM)
  /// Rows of the learned position table when it is not seq_len (a config's n_positions; OPT's
  /// max_position_embeddings + 2); 0 = seq_len.
  int position_rows = 0;
  bool learned_positions = false;  ///< learned absolute position embeddings (s x h parameters)
  bool rotary = false;             ///< rotary position embeddings applied to Q and K (Su et al. 2021)
  /// Dropout after attention scores and block outputs (GPT-3 and Megatron-LM's defaults, 0.1);
  /// Llama and MPT train without, which removes its kernels and masks.
  bool dropout = true;
  Norm norm = Norm::kRmsNorm;
  /// Head dimension when the config gives one that is not hidden / heads (Qwen3, GPT-OSS); 0: derived.
  int explicit_head_dim = 0;
  bool qk_norm = false;          ///< RMSNorm on each head's query and key (Qwen3: 2 x head_dim gains)
  bool attention_sinks = false;  ///< one learned logit per head added to the softmax (GPT-OSS)
  /// Layers whose attention sees only the last sliding_window keys (GPT-OSS alternates them
  /// with full attention); 0 = none.
  int sliding_window = 0;
  int sliding_layers = 0;
  /// Multi-token-prediction modules after the model (DeepSeek-V3 section 2.2); trained, so
  /// counted and priced each as one more MoE layer plus its projection (2h x h) and two norms.
  /// A hybrid model's module is attention then an MLP or experts (Nemotron 3 Super's "*E").
  int mtp_layers = 0;
  /// One module's weights run at every MTP depth (Megatron-Core's mtp_use_repeated_layer, as
  /// Megatron-Bridge trains Nemotron 3 Super): priced mtp_layers times, its weights held once.
  bool mtp_shared_weights = false;
  std::optional<MoeShape> moe;        ///< routed experts, absent for a dense model
  std::optional<MlaShape> mla;        ///< latent attention in place of Q, K, V projections
  std::optional<HybridShape> hybrid;  ///< single-sublayer layers by pattern, absent for a transformer

  [[nodiscard]] int head_dim() const { return explicit_head_dim > 0 ? explicit_head_dim : hidden / heads; }
  /// Width of the concatenated query heads (heads x head dim; = hidden for most models).
  [[nodiscard]] int query_width() const { return heads * head_dim(); }
  /// Query/key and value dims of one head (the latent-attention dims under MLA).
  [[nodiscard]] int qk_head_dim() const { return mla ? mla->qk_nope_head_dim + mla->qk_rope_head_dim : head_dim(); }
  [[nodiscard]] int v_head_dim() const { return mla ? mla->v_head_dim : head_dim(); }
  /// What layer `index` (0-based) holds: kTransformer for every layer of a non-hybrid model.
  [[nodiscard]] Block block(int index) const;
  /// Whether any layer is a Mamba-2 mixer (a hybrid's M layers).
  [[nodiscard]] bool has_mamba_layers() const { return hybrid && hybrid->pattern.find('M') != std::string::npos; }
  /// Whether layer `index` routes to experts (an MoE transformer block, or a hybrid's E layer).
  [[nodiscard]] bool is_moe_layer(int index) const;
  /// Layers with routed experts (0 for a dense model), MTP modules not included.
  [[nodiscard]] int moe_layer_count() const;
  /// MTP modules whose weights the model holds (one for all depths under mtp_shared_weights).
  [[nodiscard]] int mtp_weight_modules() const { return mtp_shared_weights ? std::min(mtp_layers, 1) : mtp_layers; }
  /// Blocks whose routed experts the model holds: its MoE layers and its MTP modules' weights.
  [[nodiscard]] int moe_weight_blocks() const { return moe_layer_count() + mtp_weight_modules(); }
  /// Width of a token as the routed experts and the dispatch see it: LatentMoE's latent, else h.
  [[nodiscard]] int expert_width() const { return moe && moe->latent > 0 ? moe->latent : hidden; }
};

/// A workload as the cost models see it.
struct Workload {
  std::string name;
  std::string source;                          ///< where the shape or count comes from (paper, model card, config.json)
  std::optional<TransformerShape> shape;       ///< absent for a bare parameter-count workload
  double parameters = 0.0;                     ///< total trainable parameters (count, not bytes)
  std::optional<double> published_parameters;  ///< the count its publisher states, if known
  double active_parameters = 0.0;              ///< parameters one token passes through (= parameters when dense)
  std::optional<double> published_active_parameters;  ///< the active count its publisher states
  /// The published counts are of the main model, its MTP modules left out (Nemotron 3 Super's).
  bool published_without_mtp = false;
  /// Where the shape's sequence length comes from when a plan gives none, for the note commands
  /// print: a stepcast workload's "seq_len", or a config's "max_position_embeddings" (the longest
  /// context the model supports, not a training length).
  std::string seq_len_origin;
  /// The longest context a Hugging Face config supports (max_position_embeddings, n_positions),
  /// which is not a training length: such a workload's shape has seq_len 0 and a command asks
  /// for --seq. 0 for stepcast's own workloads.
  int max_positions = 0;
  /// What a Hugging Face config was read as (family, configuration class, layout), for the
  /// "Architecture" line; empty for stepcast's own workloads.
  std::string architecture;

  [[nodiscard]] bool has_shape() const { return shape.has_value(); }
};

/// Parameters of one transformer block: attention (Q, K, V, O projections), MLP, norms, biases.
double layer_parameter_count(const TransformerShape& shape);
/// Parameters of one MoE block (attention, router, all routed and shared experts, norms) and the
/// part of it one token passes through (its top-k routed experts only).
double moe_layer_parameter_count(const TransformerShape& shape);
double moe_layer_active_parameter_count(const TransformerShape& shape);
/// Parameters of one routed expert (gated or plain MLP of expert_ffn on the expert width, biases
/// if any).
double expert_parameter_count(const TransformerShape& shape);
/// LatentMoE's two projections of one MoE block (h x latent each, without biases as Nemotron 3
/// Super has none); 0 without a latent.
double latent_projection_parameters(const TransformerShape& shape);
/// Attention parameters of one block (Q, K, V, O or the latent projections; biases, sinks, q/k norms).
double attention_parameter_count(const TransformerShape& shape);
/// Parameters of layer `index` whatever it holds (a transformer block, dense or MoE, or a hybrid's
/// sublayer with its norm); `active`: only what one token passes through (its top-k experts).
double block_parameter_count(const TransformerShape& shape, int index, bool active = false);
/// Parameters of one Mamba-2 mixer: in_proj, conv1d with its bias, dt bias, A and D per head, the
/// gated norm, out_proj (Hugging Face's NemotronHMamba2Mixer), without the layer's own norm.
double mamba_parameter_count(const TransformerShape& shape);
/// Parameters of the MTP modules the model holds (their blocks, projections and norms; the
/// embedding and output head they share counted with the main model).
double mtp_parameter_count(const TransformerShape& shape);
/// Parameters one token passes through: the routed experts it is not sent to left out;
/// embeddings and MTP modules counted as in parameter_count.
double active_parameter_count(const TransformerShape& shape);

/// Parameters of the whole model: blocks, token embedding, output projection unless tied,
/// learned positions, final norm.
double parameter_count(const TransformerShape& shape);

/// The parameters outside the transformer blocks: the embeddings, the output layer where it is
/// not tied to them, learned positions and the final norm.
double embedding_parameter_count(const TransformerShape& shape);

/// Loads a workload file. Auto-detects the format: stepcast's own JSON ({"name", "source",
/// "shape": {...}} or {"name", "source", "parameters": 7e9}) or a Hugging Face config.json
/// (recognised by "model_type" or "architectures"). Bad input throws InputError with the file
/// and the JSON pointer.
Workload load_workload(const std::filesystem::path& file);

}  // namespace stepcast::workload
