// Reading a whole input file as text, with the one error every reader gives for a missing file.
#pragma once

#include <filesystem>
#include <string>

namespace stepcast {

/// The file's bytes; InputError "cannot open file" naming it when it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace stepcast
