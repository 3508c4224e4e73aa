// Writing output files atomically, so an error never leaves a partial report behind.
#pragma once

#include <filesystem>
#include <string_view>

namespace stepcast {

/// Writes `content` to a temporary file beside `path`, then renames it over `path`.
/// Throws InputError naming the path if it cannot be written.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace stepcast
