// A plan in JSON: the compact form's keys as members, numbers for degrees, strings for names,
// true/false for switches, a list for recompute-modules; e.g. {"tp": 2, "pp": 4, "zero": 1, "recompute": "selective"}.
#include <fmt/format.h>

#include <cmath>

#include "plan_builder.hpp"
#include "stepcast/core/json_reader.hpp"
#include "stepcast/plan/plan.hpp"

namespace stepcast::plan {

Plan load_plan(const std::filesystem::path& file) {
  const nlohmann::json json = read_json_file(file);
  const JsonReader root(json, file.string());
  if (!json.is_object()) root.fail(fmt::format("expected a JSON object, got {}", json.type_name()));
  PlanBuilder builder;
  for (const auto& member : root.members()) {
    // Named references, not a structured binding: clang 14 cannot capture those in a lambda.
    const std::string& key = member.first;
    const JsonReader& value = member.second;
    const KeyFailure fail = [&value](const std::string& message) { value.fail(message); };
    std::string text;
    if (value.json().is_boolean()) {
      text = value.boolean() ? "on" : "off";
    } else if (value.json().is_number_float() && value.number() != std::floor(value.number())) {
      // A fraction (capacity-factor, moe-imbalance) as the compact form writes it; each key's
      // parser refuses it where a whole number is due, naming this member.
      text = fmt::format("{}", value.number());
    } else if (value.json().is_number()) {
      text = fmt::format("{}", value.integer());
    } else if (value.json().is_array()) {
      // A list of names (recompute-modules: ["mla_up_proj", "mlp"]) as the compact form joins them.
      for (const nlohmann::json& item : value.json()) {
        if (!item.is_string()) value.fail(fmt::format("expected a list of names, got a {} in it", item.type_name()));
        text += (text.empty() ? "" : "+") + item.get<std::string>();
      }
    } else {
      text = value.string();
    }
    builder.set(key, text, fail);
  }
  return builder.finish([&root](const std::string& message) { root.fail(message); });
}

}  // namespace stepcast::plan
