// Finding a catalogue file a topology names (catalogue.hpp).
#include "catalogue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <string>
#include <system_error>
#include <vector>

namespace stepcast::topology {

std::filesystem::path catalogue_file(const JsonReader& name, std::string_view folder, std::string_view what) {
  const std::string id = name.string();
  static const std::regex kName(R"([a-z0-9][a-z0-9.\-]*)");
  if (!std::regex_match(id, kName)) {
    name.fail(
        fmt::format("a {} of the catalogue is named by its file in topologies/{}/ without .json "
                    "(lower case letters, digits, '.' and '-'), got \"{}\"",
                    what, folder, id));
  }
  const std::string file = id + ".json";
  std::filesystem::path beside = std::filesystem::path(name.file()).parent_path() / folder / file;
  std::filesystem::path shipped = std::filesystem::path(STEPCAST_SOURCE_DIR) / "topologies" / folder / file;
  std::error_code ec;
  if (std::filesystem::exists(beside, ec)) return beside;
  if (std::filesystem::exists(shipped, ec)) return shipped;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(shipped.parent_path(), ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());  // directory order is the file system's, not a fixed one
  std::string known;
  for (const std::string& n : names) known += fmt::format("{}{}", known.empty() ? "" : ", ", n);
  name.fail(
      fmt::format("no {} file \"{}\" in {}/ beside the topology nor in the shipped catalogue (topologies/{}/: {})",
                  what, file, folder, folder, known));
}

}  // namespace stepcast::topology
