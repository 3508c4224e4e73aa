// Where a command's text goes: stdout, or a file written atomically with -o.
#pragma once

#include <string>
#include <string_view>

#include "stepcast/report/command_output.hpp"

namespace stepcast::cli {

/// A subcommand's options: what the report layer needs, and where its output goes.
template <typename Request>
struct CommandOptions {
  Request request;
  std::string output;
};

/// Prints `text` to stdout, or writes it atomically to `path` when `path` is not empty.
void emit(std::string_view text, const std::string& path);

/// Emits the output's text, then raises its refusal (exit 3) when there is one.
void finish(const report::CommandOutput& output, const std::string& path);

}  // namespace stepcast::cli
