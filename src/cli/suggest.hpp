// "Did you mean": the known name closest to a misspelled subcommand or option.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include "stepcast/core/nearest_name.hpp"

namespace stepcast::cli {

// The nearest-name search lives in core/, beside the other readers that refuse unknown names.
using stepcast::closest;
using stepcast::edit_distance;

/// The message for an argument CLI11 did not expect: an unknown subcommand or option, with the
/// nearest known one when there is one, and where the list of them is.
std::string unexpected_argument_message(const CLI::App& app, int argc, const char* const* argv,
                                        const std::string& fallback);

}  // namespace stepcast::cli
