// Command output to stdout or to an atomically written file.
#include "output.hpp"

#include <fmt/format.h>

#include "stepcast/core/output_file.hpp"

namespace stepcast::cli {

void emit(std::string_view text, const std::string& path) {
  if (path.empty()) {
    fmt::print("{}", text);
    std::fflush(stdout);
  } else {
    write_file_atomically(path, text);
  }
}

}  // namespace stepcast::cli
