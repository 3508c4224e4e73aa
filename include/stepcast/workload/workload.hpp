// A training workload: a decoder-only transformer described by its shape, or a bare parameter
// count (the seeds' "7B model"). Loaded from stepcast's JSON or a Hugging Face config.json.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace stepcast::workload {

/// Normalisation layers: LayerNorm has a gain and a bias (2h), RMSNorm only a gain (h).
enum class Norm { kLayerNorm, kRmsNorm };

/// The shape of a decoder-only transformer, in the vocabulary of Narayanan et al. 2021 (l, h, a,
/// V, s) extended for grouped-query attention and gated MLPs (Llama).
struct TransformerShape {
  int layers = 0;           ///< l: transformer blocks
  int hidden = 0;           ///< h: model width
  int heads = 0;            ///< a: attention (query) heads; head dim = hidden / heads
  int kv_heads = 0;         ///< key/value heads (GQA); == heads for multi-head attention
  int ffn_hidden = 0;       ///< MLP inner width (4h for GPT; intermediate_size for Llama)
  bool gated_mlp = false;   ///< SwiGLU-style MLP with three matrices instead of two
  int vocab = 0;            ///< V: vocabulary size
  int seq_len = 0;          ///< s: default training sequence length (a plan may override it)
  bool tied_embeddings = false;  ///< output projection shares the input embedding matrix
  bool biases = false;      ///< linear layers carry biases (GPT-2/3) or not (Llama)
  bool learned_positions = false;  ///< learned absolute position embeddings (s x h parameters)
  bool rotary = false;      ///< rotary position embeddings applied to Q and K (Su et al. 2021)
  /// Dropout after attention scores and block outputs (GPT-3 and Megatron-LM's defaults, 0.1);
  /// Llama and MPT train without, which removes its kernels and masks.
  bool dropout = true;
  Norm norm = Norm::kRmsNorm;

  [[nodiscard]] int head_dim() const { return hidden / heads; }
};

/// A workload as the cost models see it.
struct Workload {
  std::string name;
  std::string source;  ///< where the shape or count comes from (paper, model card, config.json)
  std::optional<TransformerShape> shape;  ///< absent for a bare parameter-count workload
  double parameters = 0.0;  ///< total trainable parameters (count, not bytes)
  std::optional<double> published_parameters;  ///< the count its publisher states, if known

  [[nodiscard]] bool has_shape() const { return shape.has_value(); }
};

/// Parameters of one transformer block: attention (Q, K, V, O projections), MLP, norms, biases.
double layer_parameter_count(const TransformerShape& shape);
/// Parameters of the whole model: blocks, token embedding, output projection unless tied,
/// learned positions, final norm.
double parameter_count(const TransformerShape& shape);

/// Loads a workload file. Auto-detects the format: stepcast's own JSON ({"name", "source",
/// "shape": {...}} or {"name", "source", "parameters": 7e9}) or a Hugging Face config.json
/// (recognised by "model_type" or "architectures"). Bad input throws InputError with the file
/// and the JSON pointer.
Workload load_workload(const std::filesystem::path& file);

}  // namespace stepcast::workload
