// The what-if options of every command that reads a topology: --gpus, --gpus-per-domain, --set and
// --memory-margin.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace stepcast::cli {

/// Declares --gpus N, --gpus-per-domain D and --set PATH=VALUE (repeatable) on `command`.
void add_topology_what_if_options(CLI::App& command, int& gpus, int& gpus_per_domain, std::vector<std::string>& sets);

/// Declares --gpus, --gpus-per-domain, --set and --memory-margin on `command` (commands that check memory).
void add_what_if_options(CLI::App& command, int& gpus, int& gpus_per_domain, std::vector<std::string>& sets,
                         std::string& memory_margin);

}  // namespace stepcast::cli
