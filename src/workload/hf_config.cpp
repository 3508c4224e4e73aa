// Reading a Hugging Face config.json: its model_type (or its "architectures" entry) names the
// family, whose configuration class's defaults fill the keys the file leaves out before the
// family's layout is read (hf_families.cpp). Encoders, encoder-decoders and state-space models
// are refused by what they are: their cost is not a decoder-only transformer's.
#include "hf_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "hf_extensions.hpp"
#include "hf_families.hpp"

namespace stepcast::workload {

namespace {

// Model types of transformers' families that are not decoder-only transformers (their
// configuration_*.py model_type), and what each kind is.
constexpr std::array<std::string_view, 32> kEncoderOnly = {"albert",        "bert",        "big_bird",
                                                           "camembert",     "canine",      "convbert",
                                                           "data2vec-text", "deberta",     "deberta-v2",
                                                           "distilbert",    "electra",     "ernie",
                                                           "esm",           "flaubert",    "funnel",
                                                           "ibert",         "layoutlm",    "longformer",
                                                           "megatron-bert", "mobilebert",  "modernbert",
                                                           "mpnet",         "nezha",       "nomic_bert",
                                                           "rembert",       "roberta",     "roberta-prelayernorm",
                                                           "roformer",      "squeezebert", "xlm",
                                                           "xlm-roberta",   "xmod"};
constexpr std::array<std::string_view, 24> kEncoderDecoder = {"bart",
                                                              "bigbird_pegasus",
                                                              "blenderbot",
                                                              "blenderbot-small",
                                                              "encoder-decoder",
                                                              "fsmt",
                                                              "led",
                                                              "longt5",
                                                              "m2m_100",
                                                              "marian",
                                                              "mbart",
                                                              "mt5",
                                                              "mvp",
                                                              "nllb-moe",
                                                              "pegasus",
                                                              "pegasus_x",
                                                              "plbart",
                                                              "prophetnet",
                                                              "seamless_m4t",
                                                              "switch_transformers",
                                                              "t5",
                                                              "t5gemma",
                                                              "umt5",
                                                              "whisper"};
constexpr std::array<std::string_view, 12> kStateSpace = {
    "bamba", "falcon_h1", "falcon_mamba", "granitemoehybrid", "jamba", "lfm2", "mamba", "mamba2", "recurrent_gemma",
    "rwkv",  "xlstm",     "zamba2"};

template <std::size_t N>
bool in_list(const std::array<std::string_view, N>& list, std::string_view name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

/// What a model type that is not a decoder-only transformer is, or empty.
std::string_view non_decoder_kind(std::string_view model_type, const JsonReader& r) {
  if (in_list(kEncoderOnly, model_type)) return "an encoder-only model";
  if (in_list(kEncoderDecoder, model_type)) return "an encoder-decoder model";
  if (in_list(kStateSpace, model_type)) return "a state-space (or hybrid recurrent) model";
  const auto encoder_decoder = r.find("is_encoder_decoder");
  if (encoder_decoder && encoder_decoder->json().is_boolean() && encoder_decoder->boolean())
    return "an encoder-decoder model";
  return {};
}

/// The family the config names; InputError for anything else, saying what it is.
const HfFamily& family_of(const JsonReader& r) {
  if (const auto type = r.find("model_type")) {
    const std::string model_type = type->string();
    if (const std::string_view kind = non_decoder_kind(model_type, r); !kind.empty()) {
      type->fail(
          fmt::format("model_type \"{}\" is {}, not a decoder-only transformer stepcast models", model_type, kind));
    }
    if (const HfFamily* family = find_hf_family(model_type)) return *family;
    type->fail(fmt::format(
        "model_type \"{}\" is not a family stepcast reads (it reads {}); describe the model in stepcast's own "
        "workload JSON instead (workloads/*.json: layers, hidden, heads, kv_heads, ffn_hidden, vocab, seq_len)",
        model_type, supported_hf_model_types()));
  }
  // No model_type: the first "architectures" entry names the model class.
  const JsonReader architectures = r.at("architectures");
  const auto entries = architectures.elements();
  if (entries.empty()) architectures.fail("is empty and the config has no model_type: name the model's family");
  const std::string name = entries.front().string();
  if (const HfFamily* family = find_hf_family_by_architecture(name)) return *family;
  entries.front().fail(
      fmt::format("\"{}\" is not a model class stepcast reads, and the config has no model_type "
                  "(stepcast reads the model types {})",
                  name, supported_hf_model_types()));
}

/// Old spellings some configs still carry (FalconConfig's and BloomConfig's attribute_map, OPT's
/// d_model), renamed to the ones the defaults use unless the config also has those.
nlohmann::json with_canonical_keys(const nlohmann::json& config, std::string_view model_type) {
  constexpr std::array<std::array<std::string_view, 3>, 8> kAliases = {{{"falcon", "n_layer", "num_hidden_layers"},
                                                                        {"falcon", "n_head", "num_attention_heads"},
                                                                        {"falcon", "n_head_kv", "num_kv_heads"},
                                                                        {"falcon", "n_embed", "hidden_size"},
                                                                        {"bloom", "n_embed", "hidden_size"},
                                                                        {"bloom", "num_attention_heads", "n_head"},
                                                                        {"bloom", "num_hidden_layers", "n_layer"},
                                                                        {"opt", "d_model", "hidden_size"}}};
  nlohmann::json out = config;
  for (const auto& [type, alias, key] : kAliases) {
    if (type != model_type || !out.contains(alias) || out.contains(key)) continue;
    out[std::string(key)] = out[std::string(alias)];
  }
  return out;
}

/// The config with the class's defaults for the keys it leaves out (a null it writes stays null:
/// transformers passes None to the class, which applies its rule for None).
nlohmann::json with_class_defaults(const nlohmann::json& config, const HfFamily& family) {
  nlohmann::json merged = nlohmann::json::parse(family.defaults);
  const nlohmann::json canonical = with_canonical_keys(config, family.model_type);
  for (const auto& [key, value] : canonical.items()) merged[key] = value;
  return merged;
}

/// The longest context the config supports: a position table's rows or a rotary model's limit.
int max_positions(const JsonReader& merged) {
  for (const std::string_view key : {"max_position_embeddings", "n_positions"}) {
    const auto found = merged.find(key);
    if (found && found->json().is_number_integer() && found->integer() > 0)
      return static_cast<int>(std::min<std::int64_t>(found->integer(), 1 << 30));
  }
  return 0;  // ALiBi (BLOOM): no limit in the config
}

}  // namespace

Workload read_hf_config(const JsonReader& r, const std::filesystem::path& file) {
  const HfFamily& family = family_of(r);
  const nlohmann::json merged = with_class_defaults(r.json(), family);
  const JsonReader m(merged, r.file());
  TransformerShape s;
  family.read(HfKeys(m), s);
  read_hf_extensions(m, r, family, s);
  check_shape(s, r);
  Workload w;
  w.shape = s;
  w.parameters = parameter_count(s);
  w.active_parameters = active_parameter_count(s);
  // Named as the model names itself: its hub id, else its architecture, else the file; never the
  // folder the file happens to sit in.
  const auto name = r.find("_name_or_path");
  w.name = name ? name->string() : std::string();
  if (w.name.empty()) w.name = std::string(family.model_type);
  w.max_positions = max_positions(m);
  w.architecture =
      fmt::format("{} as transformers' {} builds it: {}", family.model_type, family.config_class, family.layout);
  w.source = fmt::format("Hugging Face config.json ({})", file.string());
  return w;
}

}  // namespace stepcast::workload
