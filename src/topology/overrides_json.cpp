// --set PATH=VALUE on a topology file: the edit is made to the JSON document, which is then read
// by the same code as the file, so an edited value passes the same checks (units, ranges).
#include <fmt/format.h>
#include <charconv>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "gpu_json.hpp"
#include "network_json.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/core/json_reader.hpp"
#include "stepcast/core/nearest_name.hpp"
#include "stepcast/topology/overrides.hpp"
#include "topology_document.hpp"

namespace stepcast::topology {
namespace {

struct Leaf {
  std::string path;  ///< dotted: "node.nics.bandwidth", "links.3.bandwidth"
  nlohmann::json::json_pointer pointer;
};

// Every value of the document that is neither an object nor an array, in document order.
void collect_leaves(const nlohmann::json& value, const std::string& path, const nlohmann::json::json_pointer& pointer,
                    std::vector<Leaf>& out) {
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      collect_leaves(child, path.empty() ? key : fmt::format("{}.{}", path, key), pointer / key, out);
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      collect_leaves(value[i], path.empty() ? std::to_string(i) : fmt::format("{}.{}", path, i), pointer / i, out);
    }
  } else if (!path.empty()) {
    out.push_back({path, pointer});
  }
}

bool names_leaf(std::string_view wanted, std::string_view path) {
  return path == wanted ||
         (path.size() > wanted.size() && path.ends_with(wanted) && path[path.size() - wanted.size() - 1] == '.');
}

// Every dotted ending of every leaf path, for the "did you mean" of a misspelled path.
std::vector<std::string> path_endings(const std::vector<Leaf>& leaves) {
  std::vector<std::string> out;
  for (const Leaf& leaf : leaves) {
    std::string_view p = leaf.path;
    out.emplace_back(p);
    for (std::size_t dot = p.find('.'); dot != std::string_view::npos; dot = p.find('.', dot + 1))
      out.emplace_back(p.substr(dot + 1));
  }
  return out;
}

const Leaf& find_leaf(const std::vector<Leaf>& leaves, const std::string& wanted, const std::string& file) {
  std::vector<const Leaf*> found;
  for (const Leaf& leaf : leaves) {
    if (leaf.path == wanted) return leaf;
    if (names_leaf(wanted, leaf.path)) found.push_back(&leaf);
  }
  if (found.size() == 1) return *found.front();
  if (found.size() > 1) {
    std::string which;
    for (const Leaf* leaf : found) which += (which.empty() ? "" : ", ") + leaf->path;
    throw InputError(
        "--set", {},
        fmt::format("\"{}\" names {} fields of {} ({}): give the full path", wanted, found.size(), file, which));
  }
  const auto near = closest(wanted, path_endings(leaves));
  std::string hint = near ? fmt::format("; did you mean \"{}\"?", *near) : std::string();
  // A fabric states CollNet only where its switches reduce; --set cannot make them.
  if (!near && wanted.find("collnet") != std::string::npos) {
    hint =
        "; its fabric states no in-network reduction (SHARP): a fabric whose switches reduce has a \"collnet\" "
        "block with \"enabled\" and \"source\"";
  }
  throw InputError("--set", {},
                   fmt::format("{} has no field \"{}\"{} (a path names an existing field with dots, e.g. "
                               "node.nics.bandwidth or gpu.memory; stepcast topology --json shows the figures)",
                               file, wanted, hint));
}

// The edit's value as JSON of the kind the field holds: a number stays a number.
nlohmann::json typed_value(const nlohmann::json& current, const std::string& text, const std::string& set) {
  const auto refuse = [&](std::string_view kind) {
    throw InputError("--set", {}, fmt::format("{}: the field holds {}, got \"{}\"", set, kind, text));
  };
  if (current.is_boolean()) {
    if (text != "true" && text != "false") refuse("true or false");
    return text == "true";
  }
  if (current.is_number_integer()) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) refuse("a whole number");
    return v;
  }
  if (current.is_number()) {
    try {
      std::size_t used = 0;
      const double v = std::stod(text, &used);
      if (used != text.size()) refuse("a number");
      return v;
    } catch (const std::logic_error&) {
      refuse("a number");
    }
  }
  return text;
}

/// Applies `sets` to `doc` in order, telling `applied` about each edit.
void apply_sets(nlohmann::json& doc, const std::filesystem::path& file, const std::vector<std::string>& sets,
                std::vector<AppliedSet>& applied) {
  for (const std::string& set : sets) {
    const std::size_t eq = set.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == set.size()) {
      throw InputError("--set", {},
                       fmt::format("expected PATH=VALUE, e.g. node.nics.bandwidth=\"200 Gbps\", got \"{}\"", set));
    }
    std::vector<Leaf> leaves;
    collect_leaves(doc, "", nlohmann::json::json_pointer(), leaves);
    const Leaf& leaf = find_leaf(leaves, set.substr(0, eq), file.string());
    AppliedSet a{leaf.path, doc[leaf.pointer].dump(), "", set.substr(eq + 1), 0};
    doc[leaf.pointer] = typed_value(doc[leaf.pointer], set.substr(eq + 1), set);
    a.after = doc[leaf.pointer].dump();
    const nlohmann::json& block = doc[leaf.pointer.parent_pointer()];
    if (block.is_object() && block.contains("count") && block["count"].is_number_integer())
      a.block_count = block["count"].get<int>();
    applied.push_back(std::move(a));
  }
}

}  // namespace

Topology load_topology_with_sets(const std::filesystem::path& file, std::optional<int> nodes,
                                 const std::vector<std::string>& sets, std::optional<int> gpus_per_domain) {
  if (sets.empty()) return load_topology(file, nodes, gpus_per_domain);
  nlohmann::json doc = read_json_file(file);
  // A named GPU's figures are edited where the catalogue gives them.
  expand_named_gpu(doc, file);
  expand_named_network(doc, file);
  std::vector<AppliedSet> applied;
  apply_sets(doc, file, sets, applied);
  std::string label = file.string();
  for (const AppliedSet& a : applied) label += fmt::format(" with --set {}={}", a.path, a.given);
  // Errors in the edited document name the edits, so a refused value is traced to its --set.
  return topology_from_document(doc, label, nodes, gpus_per_domain);
}

std::vector<AppliedSet> applied_sets(const std::filesystem::path& file, const std::vector<std::string>& sets) {
  std::vector<AppliedSet> applied;
  if (sets.empty()) return applied;
  nlohmann::json doc = read_json_file(file);
  expand_named_gpu(doc, file);
  expand_named_network(doc, file);
  apply_sets(doc, file, sets, applied);
  return applied;
}

bool is_cluster_form(const std::filesystem::path& file) {
  const nlohmann::json doc = read_json_file(file);
  return doc.is_object() && doc.value("form", "") == "cluster";
}

}  // namespace stepcast::topology
