// Shared by the fuzz targets: run a reader on fuzz bytes and accept only an InputError as a
// refusal; any other exception, a crash or a sanitizer report is a finding.
#pragma once

#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "stepcast/core/errors.hpp"

namespace stepcast::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Writes the bytes to a file of this process (the loaders under test take a path).
inline std::filesystem::path as_file(std::string_view text, const char* name) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("stepcast-fuzz-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(text.data(), static_cast<std::streamsize>(text.size()));
  return path;
}

/// Runs `read`; a refusal must be an InputError with a message.
template <class Read>
void expect_value_or_input_error(Read&& read) {
  try {
    read();
  } catch (const InputError& e) {
    STEPCAST_ASSERT(!e.message().empty(), "an input error says what is wrong");
  }
}

}  // namespace stepcast::fuzz
