// "Did you mean": the known name closest to a misspelled subcommand or option.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepcast::cli {

/// Edits (insertions, deletions, substitutions, swaps of neighbours) between two words.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate within a typo's reach of `word` (at most 2 edits, and at most a third of its
/// length), the closest first; nothing when none is that close.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates);

/// The message for an argument CLI11 did not expect: an unknown subcommand or option, with the
/// nearest known one when there is one, and where the list of them is.
std::string unexpected_argument_message(const CLI::App& app, int argc, const char* const* argv, const std::string& fallback);

}  // namespace stepcast::cli
