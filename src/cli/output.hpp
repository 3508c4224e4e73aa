// Where a command's text goes: stdout, or a file written atomically with -o; and the checks every
// output path passes before a command starts its work.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "stepcast/core/output_file.hpp"
#include "stepcast/report/command_output.hpp"

namespace stepcast::cli {

/// A subcommand's options: what the report layer needs, and where its output goes.
template <typename Request>
struct CommandOptions {
  Request request;
  std::string output;
};

/// Writes `text` to `path` together with `files` (a trace, a plot): all of them replace their
/// targets at once or none does. An empty `path` or "-" prints the text on stdout instead, after
/// the files are written. `write_with`, when set, writes them instead, with what the command
/// exports beside them (report::CommandOutput::write_with).
void emit(std::string_view text, const std::string& path, const std::vector<OutputContent>& files = {},
          const std::function<void(const std::vector<OutputContent>&)>& write_with = {});

/// Emits the output's text and files; with a refusal (exit 3) prints the text on stdout, writes no
/// file, and raises the refusal.
void finish(const report::CommandOutput& output, const std::string& path);

/// Refuses, before `command` does any work, an output option (-o, --trace, --plot) whose path
/// cannot be replaced safely (check_output_path), that names the same file as an input of the
/// command (any other option's value that is a file) or as another of its outputs; and a folder
/// option (--chakra) that names something other than a folder.
void check_outputs(const CLI::App& command);

}  // namespace stepcast::cli
