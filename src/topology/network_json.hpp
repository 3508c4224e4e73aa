// The network catalogue (topologies/networks/NAME.json): the terms by which a network technology's
// NICs fall short of NCCL's tuning model, named by a topology's "nics"/"network" or given inline.
// Every error names the file, the JSON pointer and the rule.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

#include "stepcast/core/json_reader.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::topology {

/// The bounds a term must lie in: an efficiency in [0.05, 1] (NCCL's model prices the NIC at its
/// line rate, which no network beats; less than 5% is a slip), a latency factor in [0.1, 1000].
inline constexpr double kLeastNetworkEfficiency = 0.05;
inline constexpr double kLeastLatencyFactor = 0.1;
inline constexpr double kMostLatencyFactor = 1000.0;

/// "network": a name of the catalogue (its file is read) or an inline block of the same keys:
/// name, bandwidth_efficiency, p2p_bandwidth_efficiency, latency_factor, source (and fitted_on,
/// the fit's provenance, which is not read).
NetworkTerms read_network(const JsonReader& r);

/// Replaces a named "network" of a topology document by its catalogue file's block, so that
/// --set nics.network.bandwidth_efficiency=... edits the figures the catalogue gives.
void expand_named_network(nlohmann::json& doc, const std::filesystem::path& topology_file);

}  // namespace stepcast::topology
