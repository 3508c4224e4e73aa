// The what-if options of every command that reads a topology: --gpus, --set and --memory-margin.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace stepcast::cli {

/// Declares --gpus N and --set PATH=VALUE (repeatable) on `command`.
void add_topology_what_if_options(CLI::App& command, int& gpus, std::vector<std::string>& sets);

/// Declares --gpus, --set and --memory-margin on `command` (commands that check memory).
void add_what_if_options(CLI::App& command, int& gpus, std::vector<std::string>& sets, std::string& memory_margin);

}  // namespace stepcast::cli
