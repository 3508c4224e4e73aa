// Reading a topology from a JSON document already in memory, so that a document edited before
// it is read (--set) goes through exactly the checks of a file.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "stepcast/topology/topology.hpp"

namespace stepcast::topology {

/// load_topology's reading and validation of `doc`; errors name `file` and the JSON pointer.
Topology topology_from_document(const nlohmann::json& doc, const std::filesystem::path& file, std::optional<int> nodes,
                                std::optional<int> gpus_per_domain = std::nullopt);

}  // namespace stepcast::topology
