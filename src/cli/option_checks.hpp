// Checks on numeric options whose refusals read plainly ("--nodes must be at least 1, got 0"),
// where CLI11's own print the range as 0 to 1.797e308 in full.
#pragma once

#include <CLI/CLI.hpp>

namespace stepcast::cli {

/// A number > 0 (counts such as --nodes, --seq, --top).
CLI::Validator positive_number();

/// A number >= 0.
CLI::Validator non_negative_number();

}  // namespace stepcast::cli
