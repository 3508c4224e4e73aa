// Resolution of shipped data files relative to the source tree.
#include "stepcast/report/data_path.hpp"

namespace stepcast::report {

std::filesystem::path data_path(const std::string& path) {
  std::filesystem::path given(path);  // not const: returned by move
  std::error_code ec;
  if (given.empty() || given.is_absolute() || std::filesystem::exists(given, ec)) return given;
  const std::filesystem::path shipped = std::filesystem::path(STEPCAST_SOURCE_DIR) / given;
  return std::filesystem::exists(shipped, ec) ? shipped : given;
}

}  // namespace stepcast::report
