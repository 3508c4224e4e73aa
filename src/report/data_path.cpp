// Resolution of the files users name: shipped data files relative to the source tree, shipped
// names, model folders and the Hugging Face cache (huggingface_hub's layout:
// models--ORG--NAME/refs/main holds the snapshot a bare id means, snapshots/HASH/config.json).
#include "stepcast/report/data_path.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <vector>

#include "stepcast/core/errors.hpp"
#include "stepcast/core/nearest_name.hpp"

namespace stepcast::report {

namespace fs = std::filesystem;

namespace {

const fs::path kSource = STEPCAST_SOURCE_DIR;

/// The names of the shipped files in `folder` (workloads/, topologies/), sorted.
std::vector<std::string> shipped_names(const std::string& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kSource / folder, ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// A shipped file named `name` (no folder, no extension) in `folder`.
std::optional<fs::path> shipped(const std::string& folder, const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || name.ends_with(".json")) return std::nullopt;
  const fs::path file = kSource / folder / (name + ".json");
  std::error_code ec;
  return fs::is_regular_file(file, ec) ? std::optional<fs::path>(file) : std::nullopt;
}

/// Where huggingface_hub keeps its cache (its constants.py: HF_HUB_CACHE, else HF_HOME/hub, else
/// XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub).
fs::path hf_cache() {
  if (const char* hub = std::getenv("HF_HUB_CACHE"); hub && *hub) return hub;
  if (const char* home = std::getenv("HF_HOME"); home && *home) return fs::path(home) / "hub";
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "huggingface" / "hub";
  if (const char* user = std::getenv("HOME"); user && *user) return fs::path(user) / ".cache" / "huggingface" / "hub";
  return {};
}

/// Whether `name` reads as a hub id: ORG/NAME, nothing more.
bool is_hub_id(const std::string& name) {
  const auto slash = name.find('/');
  return slash != std::string::npos && slash > 0 && slash + 1 < name.size() &&
         name.find('/', slash + 1) == std::string::npos && !name.starts_with(".") && !name.ends_with(".json");
}

/// The config.json of hub model `id` in the cache: the snapshot refs/main names, else the first
/// snapshot (by name) that has one.
std::optional<fs::path> cached_config(const std::string& id, const fs::path& cache) {
  const auto slash = id.find('/');
  const fs::path repo = cache / ("models--" + id.substr(0, slash) + "--" + id.substr(slash + 1));
  std::error_code ec;
  if (!fs::is_directory(repo, ec)) return std::nullopt;
  std::string hash;
  if (std::ifstream ref(repo / "refs" / "main"); ref >> hash) {
    const fs::path config = repo / "snapshots" / hash / "config.json";
    if (fs::is_regular_file(config, ec)) return config;
  }
  std::vector<fs::path> snapshots;
  for (const auto& entry : fs::directory_iterator(repo / "snapshots", ec)) snapshots.push_back(entry.path());
  std::sort(snapshots.begin(), snapshots.end());
  for (const fs::path& snapshot : snapshots) {
    if (fs::is_regular_file(snapshot / "config.json", ec)) return snapshot / "config.json";
  }
  return std::nullopt;
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& names) {
  const auto near = closest(name, names);
  return near ? fmt::format("; did you mean \"{}\"?", *near) : std::string();
}

}  // namespace

fs::path data_path(const std::string& path) {
  fs::path given(path);  // not const: returned by move
  std::error_code ec;
  if (given.empty() || given.is_absolute() || fs::exists(given, ec)) return given;
  const fs::path in_source = kSource / given;
  return fs::exists(in_source, ec) ? in_source : given;
}

fs::path workload_path(const std::string& name) {
  fs::path file = data_path(name);
  std::error_code ec;
  if (fs::is_directory(file, ec)) {
    if (fs::is_regular_file(file / "config.json", ec)) return file / "config.json";
    throw InputError(name, {}, "is a folder without a config.json: give a workload file or a model's folder");
  }
  if (fs::exists(file, ec)) return file;
  if (const auto own = shipped("workloads", name)) return *own;
  // A file name: its loader says it cannot be opened.
  if (name.ends_with(".json")) return file;
  const fs::path cache = hf_cache();
  if (is_hub_id(name)) {
    if (const auto config = cached_config(name, cache)) return *config;
  }
  const std::vector<std::string> names = shipped_names("workloads");
  throw InputError(
      "--workload", {},
      fmt::format("\"{}\" is not a file, a folder with a config.json, a shipped workload ({}) or a Hugging Face model "
                  "in the local cache ({}){}. For a Hugging Face model, download its config first: "
                  "huggingface-cli download ORG/NAME config.json",
                  name, joined(names), cache.string(), did_you_mean(name, names)));
}

fs::path topology_path(const std::string& name) {
  fs::path file = data_path(name);
  std::error_code ec;
  if (fs::exists(file, ec)) return file;
  if (const auto own = shipped("topologies", name)) return *own;
  if (name.ends_with(".json")) return file;  // its loader says it cannot be opened
  const std::vector<std::string> names = shipped_names("topologies");
  throw InputError(
      "--topology", {},
      fmt::format("\"{}\" is not a file or a shipped topology ({}){}", name, joined(names), did_you_mean(name, names)));
}

}  // namespace stepcast::report
