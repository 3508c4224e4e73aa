// Shared by the test suites: GPT-3 175B's shape, as Brown et al. 2020 give it and Narayanan et
// al. 2021 (Table 1) and Korthikanti et al. 2022 use it: l = 96, h = 12288, a = 96, V = 51200,
// s = 2048, GPT-2-style blocks (LayerNorm, biases, learned positions, tied embeddings).
#pragma once

#include "stepcast/workload/workload.hpp"

namespace stepcast::test {

inline workload::TransformerShape gpt3_shape() {
  workload::TransformerShape s;
  s.layers = 96;
  s.hidden = 12288;
  s.heads = 96;
  s.kv_heads = 96;
  s.ffn_hidden = 4 * 12288;
  s.vocab = 51200;
  s.seq_len = 2048;
  s.tied_embeddings = true;
  s.biases = true;
  s.learned_positions = true;
  s.norm = workload::Norm::kLayerNorm;
  return s;
}

}  // namespace stepcast::test
