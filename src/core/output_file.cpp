// Atomic output: temporary file in the same folder, then rename (atomic on POSIX file systems).
#include "stepcast/core/output_file.hpp"

#include <fstream>
#include <system_error>

#include "stepcast/core/errors.hpp"

namespace stepcast {

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  std::filesystem::path temporary = path;
  temporary += ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path.string(), {}, "cannot write the output file (does its folder exist?)");
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out.flush()) {
      std::error_code ignored;
      std::filesystem::remove(temporary, ignored);
      throw InputError(path.string(), {}, "writing the output file failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw InputError(path.string(), {}, "cannot replace the output file: " + ec.message());
  }
}

}  // namespace stepcast
