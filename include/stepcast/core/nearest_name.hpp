// "Did you mean": the known name nearest a misspelled one, for every reader that refuses an
// unknown name (subcommands, options, topology fields named by --set).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepcast {

/// Edits (insertions, deletions, substitutions, swaps of neighbours) between two words.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate within a typo's reach of `word` (at most 2 edits, and at most a third of its
/// length), the closest first; nothing when none is that close.
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace stepcast
