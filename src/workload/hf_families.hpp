// Private: the Hugging Face model families stepcast reads. Each names its configuration class in
// transformers, copies that class's defaults for the keys stepcast reads (a config that leaves a
// key out gets what transformers would give it), and builds the shape its modeling file builds:
// MLP form, normalisation, biases, embeddings tying, positions and attention variants.
#pragma once

#include <string>
#include <string_view>

#include "stepcast/core/json_reader.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::workload {

/// A config with its class's defaults filled in: every key a family reads is present, though it
/// may be null (transformers' "None": the class's rule for it, such as kv heads = heads).
class HfKeys {
 public:
  explicit HfKeys(const JsonReader& merged) : r_(merged) {}
  /// A whole number >= 1.
  [[nodiscard]] int count(std::string_view key) const;
  /// As count(), or `fallback` when the key is null.
  [[nodiscard]] int count_or(std::string_view key, int fallback) const;
  [[nodiscard]] bool flag(std::string_view key) const;
  /// A probability (dropout) above zero; null counts as zero.
  [[nodiscard]] bool positive(std::string_view key) const;
  /// Whether the key holds a value (not null).
  [[nodiscard]] bool given(std::string_view key) const;
  [[nodiscard]] const JsonReader& reader() const { return r_; }

 private:
  const JsonReader& r_;
};

/// Which layers a config's sliding_window applies to, by the family's rule (a "layer_types" list
/// in the config overrides it).
enum class WindowRule {
  kNone,          ///< the family has no windowed attention
  kEveryLayer,    ///< Mistral, Mixtral, Phi-3: a non-null sliding_window applies to every layer
  kQwen,          ///< Qwen2/3: with use_sliding_window, the layers from max_window_layers on
  kEvenLayers,    ///< Gemma 2, GPT-OSS: layers 0, 2, 4, ... slide, the others attend fully
  kGemma3Pattern  ///< Gemma 3: every sliding_window_pattern-th layer attends fully, the rest slide
};

struct HfFamily {
  std::string_view model_type;
  std::string_view config_class;  ///< transformers' configuration class, e.g. "LlamaConfig"
  /// The class's defaults for the keys stepcast reads, as a JSON object (configuration_*.py).
  std::string_view defaults;
  WindowRule windows;
  /// Fills the dense shape (dims, MLP, norms, biases, embeddings, positions, dropout).
  void (*read)(const HfKeys& keys, TransformerShape& shape);
  /// What the family's modeling file builds, in a few words, for the "Architecture" line.
  std::string_view layout;
};

/// The family of `model_type`, or null when stepcast does not read it.
const HfFamily* find_hf_family(std::string_view model_type);
/// The family an "architectures" entry names ("LlamaForCausalLM"), for configs without model_type.
const HfFamily* find_hf_family_by_architecture(std::string_view architecture);
/// The model types stepcast reads, for messages.
std::string supported_hf_model_types();

}  // namespace stepcast::workload
