// The shipped catalogues of topologies/ (gpus/, networks/): finding the file a topology names.
#pragma once

#include <filesystem>
#include <string_view>

#include "stepcast/core/json_reader.hpp"

namespace stepcast::topology {

/// The file a topology names by `name` (a string) in the catalogue `folder`: FOLDER/NAME.json
/// beside the topology file, or else in the shipped topologies/FOLDER/; refused, listing the
/// shipped names, when neither exists. `what` names the kind of file in messages ("GPU").
std::filesystem::path catalogue_file(const JsonReader& name, std::string_view folder, std::string_view what);

}  // namespace stepcast::topology
