// Loading workloads: stepcast's own JSON (by shape or by bare parameter count) and Hugging Face
// config.json files (read in hf_config.cpp), told apart by their keys.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "hf_config.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/json_reader.hpp"
#include "stepcast/workload/workload.hpp"
#include "workload_limits.hpp"

namespace stepcast::workload {

namespace {

int read_int(const JsonReader& r) {
  const std::int64_t v = r.count();
  if (v > std::numeric_limits<int>::max()) r.fail(fmt::format("too large, got {}", v));
  return static_cast<int>(v);
}

/// A count that may be 0.
int read_non_negative(const JsonReader& r) {
  const std::int64_t v = r.integer();
  if (v < 0) r.fail(fmt::format("must be >= 0, got {}", v));
  if (v > std::numeric_limits<int>::max()) r.fail(fmt::format("too large, got {}", v));
  return static_cast<int>(v);
}

int read_int_or(const JsonReader& r, std::string_view key, int fallback) {
  const auto found = r.find(key);
  // Hugging Face writes null for "use the default" (GPT-2's n_inner, for example).
  if (!found || found->json().is_null()) return fallback;
  return read_int(*found);
}

bool read_bool_or(const JsonReader& r, std::string_view key, bool fallback) {
  const auto found = r.find(key);
  return found ? found->boolean() : fallback;
}

}  // namespace

int gpt_mlp_width(int hidden) {
  return static_cast<int>(std::min<std::int64_t>(4 * std::int64_t{hidden}, std::numeric_limits<int>::max()));
}

namespace {

/// A hybrid stack's pattern against the rest of the shape.
void check_hybrid(const TransformerShape& s, const JsonReader& where) {
  const std::string& pattern = s.hybrid->pattern;
  const auto bad = pattern.find_first_not_of("M*-E");
  if (bad != std::string::npos) {
    where.fail(
        fmt::format("hybrid pattern letter '{}' at layer {} is none of M (Mamba-2), * (attention), - (MLP), "
                    "E (routed experts)",
                    pattern[bad], bad));
  }
  if (pattern.find('E') != std::string::npos && !s.moe)
    where.fail("the hybrid pattern has E layers and no MoE settings");
  if (s.moe && (s.moe->first_dense_layers > 0 || s.moe->layer_step != 1))
    where.fail("a hybrid pattern places the expert layers itself: leave out the MoE layer step and first dense layers");
  if (s.sliding_window > 0) where.fail("sliding-window attention in a hybrid stack is not modelled");
  const MambaShape& m = s.hybrid->mamba;
  if (m.heads % m.groups != 0)
    where.fail(fmt::format("{} Mamba heads are not divisible by the {} groups", m.heads, m.groups));
}

/// Group-limited routing draws a token's experts from whole groups of equal size.
void check_router_groups(const MoeShape& m, const JsonReader& where) {
  const int groups = m.router_groups;
  if (m.experts % groups != 0)
    where.fail(fmt::format("{} routed experts are not divisible by the {} router groups", m.experts, groups));
  if (m.router_group_topk > groups) {
    where.fail(fmt::format("the router's best {} groups are more than its {} groups", m.router_group_topk, groups));
  }
  if (m.top_k > m.router_group_topk * (m.experts / groups)) {
    where.fail(fmt::format("top-k ({}) exceeds the {} experts of the router's best {} of {} groups", m.top_k,
                           m.router_group_topk * (m.experts / groups), m.router_group_topk, groups));
  }
}

}  // namespace

/// Rules every shape must keep, whatever the file format; reported at the shape's pointer.
void check_shape(const TransformerShape& s, const JsonReader& where) {
  detail::check_shape_limits(s, where);
  // A head dim given outright (or latent attention's own dims) need not divide the hidden size.
  if (s.explicit_head_dim == 0 && !s.mla && s.hidden % s.heads != 0) {
    where.fail(fmt::format("hidden size {} is not divisible by the {} attention heads", s.hidden, s.heads));
  }
  if (s.heads % s.kv_heads != 0) {
    where.fail(fmt::format("{} attention heads are not divisible by the {} key/value heads", s.heads, s.kv_heads));
  }
  if (s.sliding_layers > s.layers)
    where.fail(fmt::format("{} sliding-window layers exceed the {} layers", s.sliding_layers, s.layers));
  if (s.hybrid) check_hybrid(s, where);
  if (s.moe) {
    if (s.moe->top_k > s.moe->experts) {
      where.fail(fmt::format("MoE top-k ({}) exceeds the {} routed experts", s.moe->top_k, s.moe->experts));
    }
    if (s.moe_layer_count() == 0) where.fail("the MoE settings leave no layer with experts");
    check_router_groups(*s.moe, where);
  }
}

namespace {

/// The MoE block of stepcast's own shape: {"experts", "top_k", "expert_ffn", ...}.
MoeShape read_moe_shape(const JsonReader& r) {
  r.check_keys({"experts", "top_k", "expert_ffn", "shared_experts", "shared_ffn", "first_dense_layers", "layer_step",
                "router_bias", "expert_biases", "glu_clamp", "shared_expert_gate", "router_groups", "router_group_topk",
                "latent"});
  MoeShape m;
  m.experts = read_int(r.at("experts"));
  m.top_k = read_int(r.at("top_k"));
  m.expert_ffn = read_int(r.at("expert_ffn"));
  if (const auto shared = r.find("shared_experts")) m.shared_experts = read_non_negative(*shared);
  m.shared_ffn = m.shared_experts > 0 ? read_int(r.at("shared_ffn")) : 0;
  if (const auto first = r.find("first_dense_layers")) m.first_dense_layers = read_non_negative(*first);
  m.layer_step = read_int_or(r, "layer_step", 1);
  m.router_groups = read_int_or(r, "router_groups", 1);
  m.router_group_topk = read_int_or(r, "router_group_topk", 1);
  m.step_from_one = false;  // stepcast's own form counts layers from 0, as DeepSeek does
  m.router_bias = read_bool_or(r, "router_bias", false);
  m.expert_biases = read_bool_or(r, "expert_biases", false);
  if (const auto clamp = r.find("glu_clamp")) m.glu_clamp = clamp->positive_number();
  m.shared_expert_gate = read_bool_or(r, "shared_expert_gate", false);
  if (r.has("latent")) m.latent = read_int(r.at("latent"));
  return m;
}

/// The Mamba-2 mixer of stepcast's own hybrid shape.
MambaShape read_mamba_shape(const JsonReader& r) {
  r.check_keys({"heads", "head_dim", "state", "groups", "conv_kernel", "chunk"});
  MambaShape m;
  m.heads = read_int(r.at("heads"));
  m.head_dim = read_int(r.at("head_dim"));
  m.state = read_int(r.at("state"));
  m.groups = read_int_or(r, "groups", 1);
  m.conv_kernel = read_int_or(r, "conv_kernel", 4);
  m.chunk = read_int_or(r, "chunk", 128);
  return m;
}

/// The latent-attention block of stepcast's own shape.
MlaShape read_mla_shape(const JsonReader& r) {
  r.check_keys({"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
  MlaShape m;
  if (const auto q = r.find("q_lora_rank")) m.q_lora_rank = read_non_negative(*q);  // 0: a full query projection
  m.kv_lora_rank = read_int(r.at("kv_lora_rank"));
  m.qk_nope_head_dim = read_int(r.at("qk_nope_head_dim"));
  m.qk_rope_head_dim = read_int(r.at("qk_rope_head_dim"));
  m.v_head_dim = read_int(r.at("v_head_dim"));
  return m;
}

TransformerShape read_shape(const JsonReader& r) {
  r.check_keys({"layers",
                "hidden",
                "heads",
                "kv_heads",
                "ffn_hidden",
                "gated_mlp",
                "vocab",
                "seq_len",
                "tied_embeddings",
                "biases",
                "learned_positions",
                "rotary",
                "dropout",
                "norm",
                "head_dim",
                "qk_norm",
                "attention_sinks",
                "sliding_window",
                "sliding_layers",
                "mtp_layers",
                "mtp_shared_weights",
                "moe",
                "mla",
                "hybrid_pattern",
                "mamba"});
  TransformerShape s;
  if (const auto pattern = r.find("hybrid_pattern")) {
    s.hybrid = HybridShape{pattern->string(), read_mamba_shape(r.at("mamba"))};
    if (s.hybrid->pattern.empty()) pattern->fail("an empty pattern has no layers");
    if (s.hybrid->pattern.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      pattern->fail("too many layers");
    s.layers = static_cast<int>(s.hybrid->pattern.size());
    if (const auto layers = r.find("layers"); layers && read_int(*layers) != s.layers) {
      layers->fail(fmt::format("{} layers, and the hybrid pattern has {} letters", read_int(*layers), s.layers));
    }
  } else {
    if (r.has("mamba")) r.at("mamba").fail("needs \"hybrid_pattern\" (which layers are Mamba-2 mixers)");
    s.layers = read_int(r.at("layers"));
  }
  s.hidden = read_int(r.at("hidden"));
  s.heads = read_int(r.at("heads"));
  s.kv_heads = read_int_or(r, "kv_heads", s.heads);
  s.gated_mlp = read_bool_or(r, "gated_mlp", false);
  s.ffn_hidden = read_int_or(r, "ffn_hidden", gpt_mlp_width(s.hidden));
  s.vocab = read_int(r.at("vocab"));
  s.seq_len = read_int(r.at("seq_len"));
  s.tied_embeddings = read_bool_or(r, "tied_embeddings", false);
  s.biases = read_bool_or(r, "biases", false);
  s.learned_positions = read_bool_or(r, "learned_positions", false);
  s.rotary = read_bool_or(r, "rotary", false);
  s.dropout = read_bool_or(r, "dropout", true);
  if (const auto norm = r.find("norm")) {
    const std::string name = norm->string();
    if (name == "layernorm") {
      s.norm = Norm::kLayerNorm;
    } else if (name == "rmsnorm") {
      s.norm = Norm::kRmsNorm;
    } else {
      norm->fail(fmt::format("unknown norm \"{}\" (expected layernorm or rmsnorm)", name));
    }
  }
  if (r.has("head_dim")) s.explicit_head_dim = read_int(r.at("head_dim"));
  s.qk_norm = read_bool_or(r, "qk_norm", false);
  s.attention_sinks = read_bool_or(r, "attention_sinks", false);
  if (r.has("sliding_window")) {
    s.sliding_window = read_int(r.at("sliding_window"));
    s.sliding_layers = read_int_or(r, "sliding_layers", s.layers);
  } else if (r.has("sliding_layers")) {
    r.at("sliding_layers").fail("needs \"sliding_window\" (the window's length in tokens)");
  }
  if (const auto mtp = r.find("mtp_layers")) s.mtp_layers = read_non_negative(*mtp);
  s.mtp_shared_weights = read_bool_or(r, "mtp_shared_weights", false);
  if (s.mtp_shared_weights && s.mtp_layers < 2)
    r.at("mtp_shared_weights").fail("shares one MTP module's weights between depths: needs mtp_layers >= 2");
  if (const auto moe = r.find("moe")) s.moe = read_moe_shape(*moe);
  if (const auto mla = r.find("mla")) {
    s.mla = read_mla_shape(*mla);
    if (s.kv_heads != s.heads)
      r.at("kv_heads").fail("latent attention expands a key and value for every head: kv_heads must equal heads");
  }
  check_shape(s, r);
  return s;
}

Workload read_stepcast_workload(const JsonReader& r) {
  r.check_keys({"name", "source", "shape", "parameters", "published_parameters", "published_source",
                "published_active_parameters", "published_active_source", "published_without_mtp"});
  Workload w;
  w.name = r.at("name").string();
  w.source = r.at("source").string();
  const auto shape = r.find("shape");
  const auto parameters = r.find("parameters");
  if (shape && parameters) r.fail("give either \"shape\" or \"parameters\", not both");
  if (!shape && !parameters) r.fail("missing required field \"shape\" (or \"parameters\" for a bare parameter count)");
  if (shape) {
    w.shape = read_shape(*shape);
    w.seq_len_origin = fmt::format("\"seq_len\" of workload {}", w.name);
    w.parameters = parameter_count(*w.shape);
    w.active_parameters = active_parameter_count(*w.shape);
  } else {
    w.parameters = parameters->positive_number();
    if (w.parameters > detail::kMaxParameters) {
      parameters->fail(fmt::format("{:g} parameters is above stepcast's limit of {:g}, far beyond any model: a typo?",
                                   w.parameters, detail::kMaxParameters));
    }
    w.active_parameters = w.parameters;
  }
  if (const auto published = r.find("published_parameters")) w.published_parameters = published->positive_number();
  if (const auto active = r.find("published_active_parameters"))
    w.published_active_parameters = active->positive_number();
  w.published_without_mtp = read_bool_or(r, "published_without_mtp", false);
  return w;
}

}  // namespace

Workload load_workload(const std::filesystem::path& file) {
  const nlohmann::json json = read_json_file(file);
  const JsonReader root(json, file.string());
  if (!json.is_object()) root.fail(fmt::format("expected a JSON object, got {}", json.type_name()));
  // A topology given as --workload is the likeliest mix-up; say so instead of naming its first key.
  if (root.has("form") || root.has("gpu")) {
    root.fail(
        "this file is a topology (it has \"form\" and \"gpu\"), not a workload: pass it as --topology, and the model "
        "as --workload");
  }
  const bool hugging_face = root.has("model_type") || root.has("architectures");
  return hugging_face ? read_hf_config(root, file) : read_stepcast_workload(root);
}

}  // namespace stepcast::workload
