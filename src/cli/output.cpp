// Command output to stdout or to an atomically written file.
#include "output.hpp"

#include <fmt/format.h>

#include "ranks.hpp"
#include "stepcast/core/output_file.hpp"

namespace stepcast::cli {

void emit(std::string_view text, const std::string& path) {
  if (!ranks::is_root()) return;  // under MPI, rank 0 alone writes what the command made
  if (path.empty()) {
    fmt::print("{}", text);
    std::fflush(stdout);
  } else {
    write_file_atomically(path, text);
  }
}

void finish(const report::CommandOutput& output, const std::string& path) {
  emit(output.text, path);
  if (output.refusal) throw *output.refusal;
}

}  // namespace stepcast::cli
