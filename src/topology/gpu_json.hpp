// The GPU catalogue (topologies/gpus/NAME.json): finding a named GPU's file, and reading the
// parts of a GPU block beyond its datasheet figures (generation, compute capability, kernel
// figures). Every error names the file, the JSON pointer and the rule.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

#include "stepcast/core/json_reader.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::topology {

/// The catalogue file of the GPU a topology names (`name`, a string): gpus/NAME.json beside the
/// topology file, or else in the shipped catalogue; refused when neither exists.
std::filesystem::path catalogue_gpu_file(const JsonReader& name);

/// Reads "generation", "compute_capability" and "kernels" of a GPU block into `gpu`; a catalogue
/// file (`in_catalogue`) must give all three. Kernel figures that name a free parameter take its
/// value from the shipped defaults (model_parameters.hpp), which are read only then.
void read_gpu_extras(const JsonReader& r, bool in_catalogue, GpuSpec& gpu);

/// Replaces a named "gpu" of a topology document by its catalogue file's block, so that --set
/// gpu.memory=... edits the figures the catalogue gives; `topology_file` locates the catalogue.
void expand_named_gpu(nlohmann::json& doc, const std::filesystem::path& topology_file);

}  // namespace stepcast::topology
