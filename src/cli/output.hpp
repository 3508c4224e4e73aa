// Where a command's text goes: stdout, or a file written atomically with -o.
#pragma once

#include <string>
#include <string_view>

namespace stepcast::cli {

/// Prints `text` to stdout, or writes it atomically to `path` when `path` is not empty.
void emit(std::string_view text, const std::string& path);

}  // namespace stepcast::cli
