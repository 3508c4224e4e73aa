// Parameter counts of a transformer from its shape.
// Reference: Narayanan et al. 2021 (arXiv:2104.04473), section 5.1: P = 12lh^2(1 + 13/(12h) +
// (V+s)/(12lh)) for GPT; the terms below reduce to exactly that for a GPT shape (biases,
// LayerNorm, learned positions, tied embeddings) and extend it to GQA and gated MLPs.
#include "stepcast/workload/workload.hpp"

namespace stepcast::workload {

namespace {

double norm_parameters(const TransformerShape& s) {
  const double h = s.hidden;
  return s.norm == Norm::kLayerNorm ? 2.0 * h : h;  // gain (+ bias for LayerNorm)
}

}  // namespace

double layer_parameter_count(const TransformerShape& s) {
  const double h = s.hidden;
  const double kv = static_cast<double>(s.kv_heads) * s.head_dim();  // width of K and of V
  const double f = s.ffn_hidden;
  // Attention: Q (h x h), K and V (h x kv each), output projection (h x h).
  double attention = 2.0 * h * h + 2.0 * h * kv;
  // MLP: up and down projections, plus the gate of a SwiGLU MLP (Shazeer 2020).
  double mlp = (s.gated_mlp ? 3.0 : 2.0) * h * f;
  if (s.biases) {
    attention += h + 2.0 * kv + h;
    mlp += (s.gated_mlp ? 2.0 : 1.0) * f + h;
  }
  // Two norms per block: before attention and before the MLP.
  return attention + mlp + 2.0 * norm_parameters(s);
}

double parameter_count(const TransformerShape& s) {
  const double h = s.hidden;
  const double embedding = static_cast<double>(s.vocab) * h;
  double total = s.layers * layer_parameter_count(s) + embedding;
  if (!s.tied_embeddings) total += embedding;  // separate output projection (LM head)
  if (s.learned_positions) total += static_cast<double>(s.seq_len) * h;
  return total + norm_parameters(s);  // final norm
}

}  // namespace stepcast::workload
